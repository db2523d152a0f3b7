//! Regions on the command line: `--region "0:10,5,:"` parsed into a box, and boxes walked in
//! slabs of bounded size (for output streamed in C order).

use super::CliError;

/// Call `each` with the box `offset`/`shape` cut into sub-boxes of at most `limit` bytes (at least
/// one element each), in an order whose bytes, concatenated, are the box's bytes in C order:
/// single indices on the outer dimensions, runs along the first dimension whose inner part fits.
/// Nothing is collected, so a region of any size is walked in constant memory.
pub(crate) fn for_each_slab<E>(
    offset: &[u64],
    shape: &[u64],
    element: u64,
    limit: u64,
    mut each: impl FnMut(&[u64], &[u64]) -> Result<(), E>,
) -> Result<(), E> {
    if shape.contains(&0) {
        return Ok(());
    }
    // The first dimension d whose inner part (dimensions from d on) fits in the limit.
    let mut inner = element;
    let mut d = shape.len();
    while d > 0 && inner.saturating_mul(shape[d - 1]) <= limit {
        d -= 1;
        inner *= shape[d];
    }
    if d == 0 {
        return each(offset, shape);
    }
    // Dimension `cut` is walked in runs of `run` indices; the ones before it one index at a time.
    let cut = d - 1;
    let run = (limit / inner).max(1);
    let mut index: Vec<u64> = vec![0; cut];
    let (mut o, mut s) = (offset.to_vec(), shape.to_vec());
    s[..cut].fill(1);
    loop {
        for k in 0..cut {
            o[k] = offset[k] + index[k];
        }
        let mut start = 0;
        while start < shape[cut] {
            s[cut] = run.min(shape[cut] - start);
            o[cut] = offset[cut] + start;
            each(&o, &s)?;
            start += s[cut];
        }
        // The next index of the outer dimensions, in C order.
        let mut k = cut;
        loop {
            if k == 0 {
                return Ok(());
            }
            k -= 1;
            index[k] += 1;
            if index[k] < shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
}

/// A parsed `--region`: a box, and which of its dimensions JSON output keeps.
#[derive(Debug, PartialEq)]
pub(crate) struct Selection {
    pub offset: Vec<u64>,
    pub shape: Vec<u64>,
    pub kept: Vec<bool>,
}

/// Parse "0:10,5,:" into offset, shape and which dimensions stay (an index drops its dimension
/// from JSON output, as numpy does). Missing trailing entries mean the whole dimension; negative
/// positions count from the end.
pub(crate) fn parse_region(text: &str, array_shape: &[u64]) -> Result<Selection, CliError> {
    let parts: Vec<&str> = if text.trim().is_empty() { Vec::new() } else { text.split(',').map(str::trim).collect() };
    if parts.len() > array_shape.len() {
        return Err(CliError::new(format!(
            "region \"{text}\" has {} entries, the array has {} dimensions",
            parts.len(),
            array_shape.len()
        )));
    }
    let (mut offset, mut shape, mut kept) = (Vec::new(), Vec::new(), Vec::new());
    for (d, &len) in array_shape.iter().enumerate() {
        let part = parts.get(d).copied().unwrap_or(":");
        let bad = |why: &str| CliError::new(format!("region entry \"{part}\" for dimension {d} (length {len}): {why}"));
        let pos = |s: &str| -> Result<u64, CliError> {
            let v: i128 = s.parse().map_err(|_| bad("not an integer"))?;
            let v = if v < 0 { v + len as i128 } else { v };
            if v < 0 || v > len as i128 {
                return Err(bad("out of bounds"));
            }
            Ok(v as u64)
        };
        match part.split_once(':') {
            Some((start, stop)) => {
                if stop.contains(':') {
                    return Err(bad("steps are not supported"));
                }
                let start = if start.is_empty() { 0 } else { pos(start)? };
                let stop = if stop.is_empty() { len } else { pos(stop)? };
                offset.push(start);
                shape.push(stop.saturating_sub(start));
                kept.push(true);
            }
            None => {
                let i = pos(part)?;
                if i >= len {
                    return Err(bad("out of bounds"));
                }
                offset.push(i);
                shape.push(1);
                kept.push(false);
            }
        }
    }
    Ok(Selection { offset, shape, kept })
}

#[cfg(test)]
mod tests {
    use super::{for_each_slab, parse_region, Selection};

    /// The slabs of a box, as (offset, shape) pairs.
    fn slabs(offset: &[u64], shape: &[u64], limit: u64) -> Vec<(Vec<u64>, Vec<u64>)> {
        let mut out = Vec::new();
        for_each_slab(offset, shape, 1, limit, |o, s| -> Result<(), ()> {
            out.push((o.to_vec(), s.to_vec()));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn slabs_cover_the_box_in_c_order() {
        assert_eq!(slabs(&[1, 2], &[3, 4], 100), [(vec![1, 2], vec![3, 4])]);
        assert_eq!(slabs(&[0, 0], &[3, 4], 8), [(vec![0, 0], vec![2, 4]), (vec![2, 0], vec![1, 4])]);
        let rows = slabs(&[5, 1], &[2, 5], 2);
        let expected = [(5, 1, 2), (5, 3, 2), (5, 5, 1), (6, 1, 2), (6, 3, 2), (6, 5, 1)];
        let expected: Vec<_> = expected.iter().map(|&(r, c, n)| (vec![r, c], vec![1, n])).collect();
        assert_eq!(rows, expected);
        assert!(slabs(&[0, 0], &[0, 9], 4).is_empty());
        // Every element once, in C order, whatever the limit.
        for limit in 1..30 {
            let mut seen = Vec::new();
            for (o, s) in slabs(&[1, 0, 2], &[2, 3, 4], limit) {
                for i in 0..s[0] {
                    for j in 0..s[1] {
                        for k in 0..s[2] {
                            seen.push((o[0] + i, o[1] + j, o[2] + k));
                        }
                    }
                }
            }
            let mut all = Vec::new();
            for i in 1..3 {
                for j in 0..3 {
                    for k in 2..6 {
                        all.push((i, j, k));
                    }
                }
            }
            assert_eq!(seen, all, "limit {limit}");
        }
    }

    #[test]
    fn regions_parse_like_numpy_slices() {
        let sel = parse_region("0:10,5,:", &[20, 8, 4]).ok().unwrap();
        assert_eq!(sel, Selection { offset: vec![0, 5, 0], shape: vec![10, 1, 4], kept: vec![true, false, true] });
        let sel = parse_region("-3:", &[10]).ok().unwrap();
        assert_eq!((sel.offset, sel.shape), (vec![7], vec![3]));
        assert!(parse_region("0:11", &[10]).is_err());
        assert!(parse_region("10", &[10]).is_err());
        assert!(parse_region("0:2:1", &[10]).is_err());
        assert!(parse_region("1,2", &[10]).is_err());
    }
}

//! The shared benchmark data (../shared/bench/bench_data.py): identical bytes in every language.
//!
//! `x[i] = f32(sin(i / 1000) * 1000 + u(i))`, `u(i) = (splitmix64(i) >> 40) / 2^24 - 0.5`, with the
//! sin term in f64 and the sum rounded to f32; `i` is the flat C-order index.

use rayon::prelude::*;

fn splitmix64(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Element `i` of the benchmark data.
pub(crate) fn value(i: u64) -> f32 {
    let u = (splitmix64(i) >> 40) as f64 / (1u64 << 24) as f64 - 0.5;
    ((i as f64 / 1000.0).sin() * 1000.0 + u) as f32
}

/// The first `n` elements as little-endian bytes, generated in parallel.
pub(crate) fn bench_bytes(n: u64) -> Vec<u8> {
    let mut out = vec![0u8; n as usize * 4];
    out.par_chunks_mut(4 << 16).enumerate().for_each(|(block, bytes)| {
        let first = block as u64 * (1 << 16);
        for (k, slot) in bytes.chunks_exact_mut(4).enumerate() {
            slot.copy_from_slice(&value(first + k as u64).to_le_bytes());
        }
    });
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn matches_the_python_formula_bit_for_bit() {
        // Bits printed by ../shared/bench/bench_data.py for these indices.
        for (i, bits) in [(0, 0x3ec4_4150), (1, 0x3f88_8515), (12345, 0xc35b_ef15), (10_000_000, 0xc398_e338)] {
            assert_eq!(super::value(i).to_bits(), bits, "element {i}");
        }
        let bytes = super::bench_bytes(12346);
        assert_eq!(bytes[12345 * 4..], 0xc35b_ef15u32.to_le_bytes());
    }
}

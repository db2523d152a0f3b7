//! Standard base64, the form zarr-python and Zarr v2 give byte-string fill values in.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (RFC 4648 alphabet, `=` padding optional), as Python's `base64` writes it.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let mut acc = 0u32;
    let mut held = 0;
    for b in body.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push((acc >> held) as u8);
            acc &= (1 << held) - 1;
        }
    }
    // Leftover bits must be zero, or the text is not what an encoder writes.
    (acc == 0).then_some(out)
}

/// Standard base64 with `=` padding, as Python's `base64.standard_b64encode` writes it.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let mut buf = [0u8; 3];
        buf[..group.len()].copy_from_slice(group);
        let n = u32::from(buf[0]) << 16 | u32::from(buf[1]) << 8 | u32::from(buf[2]);
        for i in 0..4 {
            if i <= group.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};

    #[test]
    fn decodes_padded_and_unpadded_and_refuses_garbage() {
        assert_eq!(decode("").unwrap(), b"");
        assert_eq!(decode("AQID").unwrap(), [1, 2, 3]);
        assert_eq!(decode("AQIDBA==").unwrap(), [1, 2, 3, 4]);
        assert_eq!(decode("AQIDBA").unwrap(), [1, 2, 3, 4]);
        assert_eq!(decode("AQIDBAU=").unwrap(), [1, 2, 3, 4, 5]);
        assert_eq!(decode("/+8=").unwrap(), [0xff, 0xef]);
        for bad in ["A", "AQIDB", "AQ===", "AQ!D", "AR==", "AQIDBA=x"] {
            assert!(decode(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn encode_pads_and_round_trips() {
        assert_eq!(encode(b""), "");
        assert_eq!(encode(&[1, 2, 3]), "AQID");
        assert_eq!(encode(&[1, 2, 3, 4]), "AQIDBA==");
        assert_eq!(encode(&[1, 2, 3, 4, 5]), "AQIDBAU=");
        for len in 0..40u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(97)).collect();
            assert_eq!(decode(&encode(&bytes)).unwrap(), bytes);
        }
    }
}

//! A small deterministic random generator (SplitMix64) for the transaction and crash tests: the
//! same seed gives the same workload in every process, so a parent can replay what a child did.

/// SplitMix64 (Steele, Lea, Flood 2014).
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator for stream `stream` of `seed` (e.g. transaction number `stream`).
    pub fn new(seed: u64, stream: u64) -> SplitMix {
        let mut rng = SplitMix(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// A non-zero number in `-max..=max`.
    pub fn nonzero(&mut self, max: i64) -> i64 {
        let magnitude = self.range(1, max as u64) as i64;
        if self.next_u64() & 1 == 0 {
            magnitude
        } else {
            -magnitude
        }
    }
}

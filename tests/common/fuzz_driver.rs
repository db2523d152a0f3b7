//! A mutation fuzzer that runs on the stable toolchain inside `cargo test`: seed inputs (valid
//! documents, archives, chunks) are mutated at random — bit flips, interesting integers, cut,
//! duplicated and spliced ranges, JSON numbers swapped for extreme ones — and each mutant goes
//! through a target, which must answer with a value or an error, never a panic.
//!
//! `ZARRDB_FUZZ_SECONDS=N` runs each target for N seconds instead of its CI iteration count (the
//! recorded long run, docs/benchmarks.md); `ZARRDB_FUZZ_SEED` picks another stream. A panic
//! fails the test with the seed, iteration and input (hex), and writes the input to
//! `target/fuzz-findings/` so it can be turned into a regression test.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::splitmix::SplitMix;

/// Iterations per target in a CI run.
pub const CI_ITERATIONS: u64 = 3_000;

/// Values that break arithmetic: zero, one, powers of two at the type edges, all-ones.
const INTERESTING: [u64; 12] =
    [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, 1 << 40, i64::MAX as u64, u64::MAX];

/// JSON numbers that stress shape, chunk and size arithmetic.
const NUMBERS: [&str; 10] = [
    "0",
    "-1",
    "1e308",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "2.5",
    "-0",
    "1099511627776",
    "65536",
];

/// Run `target` on mutants of `seeds` and fail on the first panic.
pub fn fuzz(name: &str, seeds: &[Vec<u8>], mut target: impl FnMut(&[u8])) {
    assert!(!seeds.is_empty(), "{name}: no seeds");
    let seed: u64 = std::env::var("ZARRDB_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let budget = std::env::var("ZARRDB_FUZZ_SECONDS").ok().and_then(|v| v.parse().ok()).map(Duration::from_secs);
    let start = Instant::now();
    let mut rng = SplitMix::new(seed, name.len() as u64);
    // Seeds first, unmutated: the target must take every valid input.
    let mut iteration = 0u64;
    loop {
        let input = match iteration {
            i if (i as usize) < seeds.len() => seeds[i as usize].clone(),
            _ => mutate(&mut rng, seeds),
        };
        if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
            let path = save(name, seed, iteration, &input);
            panic!(
                "{name}: seed {seed}, iteration {iteration}: the target panicked on this input (saved to {}):\n{}",
                path.display(),
                hex(&input)
            );
        }
        iteration += 1;
        let done = match budget {
            Some(budget) => start.elapsed() >= budget,
            None => iteration >= CI_ITERATIONS,
        };
        if done {
            break;
        }
    }
    println!("{name}: {iteration} inputs in {:.1} s, no panic", start.elapsed().as_secs_f64());
}

/// One mutant: a seed changed by one to eight mutations.
pub fn mutate(rng: &mut SplitMix, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut data = seeds[rng.range(0, seeds.len() as u64 - 1) as usize].clone();
    for _ in 0..rng.range(1, 8) {
        mutate_once(rng, &mut data, seeds);
    }
    data
}

fn mutate_once(rng: &mut SplitMix, data: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    if data.is_empty() {
        data.push(rng.next_u64() as u8);
        return;
    }
    let len = data.len() as u64;
    let at = rng.range(0, len - 1) as usize;
    match rng.range(0, 8) {
        0 => data[at] ^= 1 << rng.range(0, 7),
        1 => data[at] = rng.next_u64() as u8,
        2 => {
            // An interesting integer, little- or big-endian, 1 to 8 bytes wide.
            let value = INTERESTING[rng.range(0, INTERESTING.len() as u64 - 1) as usize];
            let width = [1usize, 2, 4, 8][rng.range(0, 3) as usize].min(data.len() - at);
            let bytes = if rng.next_u64() & 1 == 0 { value.to_le_bytes() } else { value.to_be_bytes() };
            data[at..at + width].copy_from_slice(&bytes[..width]);
        }
        3 => data.truncate(at),
        4 => {
            let end = rng.range(at as u64, len) as usize;
            data.drain(at..end);
        }
        5 => {
            // Duplicate a range in place.
            let end = rng.range(at as u64, len.min(at as u64 + 256)) as usize;
            let copy = data[at..end].to_vec();
            let to = rng.range(0, len) as usize;
            data.splice(to..to, copy);
        }
        6 => {
            // Splice in a piece of another seed.
            let other = &seeds[rng.range(0, seeds.len() as u64 - 1) as usize];
            if !other.is_empty() {
                let from = rng.range(0, other.len() as u64 - 1) as usize;
                let end = rng.range(from as u64, other.len() as u64) as usize;
                data.splice(at..at, other[from..end].iter().copied());
            }
        }
        _ => replace_number(rng, data),
    }
}

/// Replace one run of ASCII digits (a JSON number, most likely) with an extreme one.
fn replace_number(rng: &mut SplitMix, data: &mut Vec<u8>) {
    let digits: Vec<usize> = data.iter().enumerate().filter(|(_, b)| b.is_ascii_digit()).map(|(i, _)| i).collect();
    if digits.is_empty() {
        return;
    }
    let start = digits[rng.range(0, digits.len() as u64 - 1) as usize];
    let end = data[start..].iter().position(|b| !b.is_ascii_digit()).map_or(data.len(), |n| start + n);
    let number = NUMBERS[rng.range(0, NUMBERS.len() as u64 - 1) as usize];
    data.splice(start..end, number.bytes());
}

fn save(name: &str, seed: u64, iteration: u64, input: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz-findings");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{name}-{seed}-{iteration}.bin"));
    let _ = std::fs::write(&path, input);
    path
}

fn hex(input: &[u8]) -> String {
    let shown = &input[..input.len().min(4096)];
    let text: String = shown.iter().map(|b| format!("{b:02x}")).collect();
    match input.len() > shown.len() {
        true => format!("{text}... ({} bytes)", input.len()),
        false => text,
    }
}

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zarrdb_fuzz::history::run(data));

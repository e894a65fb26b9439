#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fsgate_core::fuzz::filters(data));

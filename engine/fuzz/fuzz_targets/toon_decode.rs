//! Fuzz target: `pm_engine::toon::decode` must return `Ok` or `Err` on any UTF-8 input, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = pm_engine::toon::decode(text);
    }
});

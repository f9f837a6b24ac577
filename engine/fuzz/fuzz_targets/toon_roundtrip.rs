//! Fuzz target: whatever `decode` accepts must survive `encode` and decode back to the same
//! value, and re-encoding that value must give the same text (a fixed point).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pm_engine::toon::{decode, encode};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = decode(text) else {
        return;
    };
    let encoded = encode(&value);
    let again = decode(&encoded).unwrap_or_else(|e| panic!("re-decoding failed: {e}\n{encoded}"));
    assert_eq!(again, value, "round trip changed the value:\n{encoded}");
    assert_eq!(encode(&again), encoded, "encoding is not a fixed point");
});

//! Fuzz target: a history stream's bytes parse to entries or a structured error, never a
//! panic, and every entry read re-serialises to a line that reads back as the same entry.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pm_engine::history::parse_stream;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("history/pm-a.jsonl");
    let Ok(read) = parse_stream(data, "pm-a", path) else {
        return;
    };
    for entry in &read.entries {
        let line = format!("{}\n", entry.to_line());
        let again = parse_stream(line.as_bytes(), "pm-a", path)
            .unwrap_or_else(|e| panic!("re-serialised line refused: {e}\n{line}"));
        assert_eq!(again.entries, std::slice::from_ref(entry), "{line}");
    }
});

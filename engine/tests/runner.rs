//! The single integration-test binary of pm-engine; every `tests/test_*.rs` is declared here.

mod test_forgotten_files;
mod test_history_corpus;

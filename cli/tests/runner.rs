//! The single integration-test binary of pm-cli; every `tests/test_*.rs` is declared here.

mod test_forgotten_files;

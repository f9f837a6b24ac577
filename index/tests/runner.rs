//! The single integration-test binary of pm-index; every `tests/test_*.rs` is declared here.

//! The single integration-test binary of pm-engine; every `tests/test_*.rs` is declared here.

// Generators and invariants of the history and file property tests.
mod history_forgery;
mod history_fuzz;
// Value generators of the TOON property and oracle tests.
mod toon_values;

mod test_bench_corpus;
mod test_file_props;
mod test_forgotten_files;
mod test_health_memo;
mod test_history_corpus;
mod test_history_heads;
mod test_history_lines;
mod test_history_props;
mod test_init_golden;
mod test_item_corpus;
mod test_item_props;
mod test_mutate_corpus;
mod test_read_corpus;
mod test_scan_corpus;
mod test_settings_props;
mod test_toon_corpus;
mod test_toon_oracle;
mod test_toon_props;
mod test_tracker_corpus;

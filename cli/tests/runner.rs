//! The single integration-test binary of pm-cli; every `tests/test_*.rs` is declared here.

// Shared harness: each test file uses a different subset of it.
#[allow(dead_code)]
mod common;

// The calibration gate's measurement and rules (used by test_calibration).
mod calibration;

mod test_activity;
mod test_aggregate;
mod test_bench;
mod test_calibration;
mod test_clock_reads;
mod test_close_append;
mod test_concurrency;
mod test_context_sections;
mod test_contracts;
mod test_crash;
mod test_drift_recovery;
mod test_error_echo;
mod test_events;
mod test_filters;
mod test_findings;
mod test_flag_parity;
mod test_forgotten_files;
mod test_generation_race;
mod test_get;
mod test_get_fields;
mod test_governance;
mod test_graph_reads;
mod test_health;
mod test_help;
mod test_history;
mod test_history_crafted;
mod test_history_provenance;
mod test_history_repair;
mod test_in_process_reads;
mod test_index_commands;
mod test_init;
mod test_large_output;
mod test_leftovers;
mod test_linked_tests;
mod test_links;
mod test_list;
mod test_list_export;
mod test_locks;
mod test_log_entries;
mod test_machine_contract;
mod test_merge_delete;
mod test_merge_fence;
mod test_merge_history;
mod test_merge_swarm;
mod test_module_layers;
mod test_mutations;
mod test_not_in_project;
mod test_numeric_flags;
mod test_rank_equivalence;
mod test_rank_reads;
mod test_read_output;
mod test_read_output_props;
mod test_sample_tracker;
mod test_search_highlight;
mod test_secret_guard;
mod test_settings;
mod test_skipped_files;
mod test_symlinks;
mod test_time_windows;
mod test_transcript;
mod test_update_flags;
mod test_usage_errors;
mod test_validate;
mod test_validate_checks;
mod test_where;

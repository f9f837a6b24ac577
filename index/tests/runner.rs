//! The single integration-test binary of pm-index; every `tests/test_*.rs` is declared here.

#[allow(dead_code)]
mod fixture;

mod test_dirsig;
mod test_equivalence;
mod test_faults;
mod test_freshness;
mod test_graph_reach;
mod test_health_listing;
mod test_rank_rows;
mod test_search;
mod test_speculation;

//! Shared fixtures for pm's criterion benches (inputs only; no production code lives here).

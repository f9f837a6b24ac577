//! The context-intent calibration gate (index-ranking-bench §5.5): measurement on generated
//! tiers and the approved-values rules.

pub mod gate;
pub mod measure;

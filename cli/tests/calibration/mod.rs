//! The context-intent calibration gate (a port of pm-cli's release calibration): measurement
//! on generated tiers and the approved-values rules.

pub mod gate;
pub mod measure;

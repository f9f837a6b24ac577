//! Graph reads over parent links and dependency edges (`pm graph`, `pm deps`): the item graph,
//! bounded traversals with cursors, path search, shape analysis, structural audit and the
//! dependency tree of one item. Every walk visits a node at most once; cycles are reported.

pub mod analysis;
pub mod cycles;
pub mod deps;
pub mod model;
pub mod paths;
pub mod reach;
pub mod traverse;

pub use analysis::{Finding, GraphAnalysis, analyze, audit};
pub use model::{Direction, GraphItem, ItemGraph, Kind, KindSet, NodeInfo};
pub use paths::{Path, PathOptions, PathSearch, find_paths};
pub use reach::{EdgeModel, ItemSource, KindFilter, Reach, reachable_items};
pub use traverse::{Reached, Traversal, TraversalOptions, traverse};

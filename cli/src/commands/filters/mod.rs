//! The one filter front-end of list, search, context, next and aggregate: the clap groups, one
//! parser per value kind, the query builder and the echo.

pub mod list_filters;
pub mod rank_filters;

//! The only TOON codec of pm: `decode`/`encode` reproduce `@toon-format/toon` 4.1.1 with default
//! options (item files are written with `encode`), and `render_output` is pm's stdout renderer
//! built on top of `encode`. No I/O here.

mod arrays;
mod decode;
mod encode;
mod header;
mod quote;
mod render;
mod scan;
mod shape;
mod token;

pub use decode::decode;
pub use encode::encode;
pub use render::render_output;
pub(crate) use token::{Stops, skip_to};

/// A TOON decoding error: the 1-based line it was found on and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Line {line}: {message}")]
pub struct ToonError {
    /// 1-based line number in the decoded text.
    pub line: usize,
    /// What is wrong, worded like the messages of `@toon-format/toon` 4.1.1.
    pub message: String,
}

impl ToonError {
    pub(crate) fn new(line: usize, message: impl Into<String>) -> ToonError {
        ToonError {
            line,
            message: message.into(),
        }
    }
}

//! The one output path: a serializable value becomes a `serde_json::Value`, then TOON or JSON.
//! Commands return plain data and never choose an encoding; only `render` branches on `Format`.

pub mod budget;
pub(crate) mod compact;
mod json;
mod json_stream;
pub mod rows;
mod toon;

use std::io::{self, Write};

use serde::Serialize;

pub use json_stream::{RowEntry, RowSource, StreamedRow};

/// An output encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// TOON, pm's compact default encoding
    Toon,
    /// Pretty-printed JSON with two-space indentation
    Json,
}

impl Format {
    /// Returns the chosen format, strongest first: `--output-format`, then `--json`, then
    /// the tracker's `output.default_format`, then TOON.
    pub fn resolve(
        explicit: Option<Format>,
        json_flag: bool,
        settings_default: Option<Format>,
    ) -> Format {
        explicit
            .or(json_flag.then_some(Format::Json))
            .or(settings_default)
            .unwrap_or(Format::Toon)
    }

    /// Returns the flag value naming this format (`toon`, `json`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Toon => "toon",
            Format::Json => "json",
        }
    }
}

/// Writes `value` to `out` in `format`, followed by one newline.
///
/// The value is first converted to a `serde_json::Value` (struct field order is kept because
/// the workspace enables `preserve_order`), so TOON and JSON are two encodings of the same data.
///
/// # Errors
/// Fails when the value cannot be represented as JSON or `out` cannot be written.
pub fn render(value: &impl Serialize, format: Format, out: &mut dyn Write) -> io::Result<()> {
    let value = serde_json::to_value(value).map_err(io::Error::other)?;
    render_value(&value, format, out)
}

/// Writes an already built `value` to `out` in `format`: exactly [`encode`]'s bytes, without
/// copying the value first. JSON is streamed in chunks, so a large result is never held as
/// text in full.
///
/// # Errors
/// Fails when `out` cannot be written.
pub fn render_value(
    value: &serde_json::Value,
    format: Format,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Toon => out.write_all(toon::encode(value).as_bytes())?,
        Format::Json => json::write(value, out)?,
    }
    out.flush()
}

/// Writes the JSON object `root` with the rows of `rows` in place of its `key` entry: the
/// bytes [`render_value`] prints for `root` holding those rows, produced row by row.
///
/// # Errors
/// Fails when `out` cannot be written.
pub fn render_streamed_json(
    root: &serde_json::Map<String, serde_json::Value>,
    key: &str,
    rows: &dyn RowSource,
    out: &mut dyn Write,
) -> io::Result<()> {
    json_stream::write(root, key, rows, out)?;
    out.flush()
}

/// Returns `encode(value, format).len()`; JSON is counted without building the text.
pub fn encoded_len(value: &serde_json::Value, format: Format) -> usize {
    match format {
        Format::Toon => toon::encode(value).len(),
        Format::Json => json::len(value),
    }
}

/// Returns exactly the text [`render`] prints for `value`: the bytes token budgets measure.
pub fn encode(value: &serde_json::Value, format: Format) -> String {
    match format {
        Format::Toon => toon::encode(value),
        Format::Json => json::encode(value),
    }
}

/// Writes a result that pm-cli prints in two shapes: `summary` in TOON, `full` in JSON.
///
/// pm-cli keeps TOON short for results with a large, rarely needed part (the settings tree of
/// `init`); JSON consumers get every field. This is the only other place that looks at `format`.
///
/// # Errors
/// As [`render`].
pub fn render_summarized(
    summary: &impl Serialize,
    full: &impl Serialize,
    format: Format,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Toon => render(summary, format, out),
        Format::Json => render(full, format, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Sample {
        zeta: u32,
        alpha: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        absent: Option<String>,
        list: Vec<u32>,
    }

    fn sample() -> Sample {
        Sample {
            zeta: 1,
            alpha: "a\u{e9}",
            absent: None,
            list: vec![],
        }
    }

    #[test]
    fn json_keeps_field_order_and_skips_none() -> Result<(), Box<dyn std::error::Error>> {
        let mut out = Vec::new();
        render(&sample(), Format::Json, &mut out)?;
        assert_eq!(
            String::from_utf8(out)?,
            "{\n  \"zeta\": 1,\n  \"alpha\": \"a\u{e9}\",\n  \"list\": []\n}\n"
        );
        Ok(())
    }

    #[test]
    fn toon_uses_the_output_renderer() -> Result<(), Box<dyn std::error::Error>> {
        let mut out = Vec::new();
        render(&sample(), Format::Toon, &mut out)?;
        assert_eq!(String::from_utf8(out)?, "zeta: 1\nalpha: \"a\u{e9}\"\n");
        Ok(())
    }

    #[test]
    fn resolution_order() {
        use Format::{Json, Toon};
        assert_eq!(Format::resolve(None, false, None), Toon);
        assert_eq!(Format::resolve(None, true, None), Json);
        assert_eq!(Format::resolve(Some(Toon), true, None), Toon);
        assert_eq!(Format::resolve(None, false, Some(Json)), Json);
        assert_eq!(Format::resolve(None, true, Some(Toon)), Json);
        assert_eq!(Format::resolve(Some(Toon), false, Some(Json)), Toon);
    }
}

//! Decoding of array bodies (inline values, tables with nested column groups, keyed tables and
//! list items) for the decoder in [`super::decode`], with 4.1.1's strict count and width checks.

use super::ToonError;
use super::decode::{
    check_depth, decode_key_value, finish_object, is_array_header_content, parse_key_token,
    resolve_header, vacant,
};
use super::header::{Field, Header, count_leaves};
use super::scan::{Line, Reader};
use super::token::{
    find_unquoted, find_unquoted_either, parse_primitive_token, split_delimited, trim_spaces,
};
use serde_json::{Map, Value};

/// Decodes the body of an array (or keyed object) whose header line was just consumed.
pub(super) fn decode_array_from_header<'a>(
    r: &mut Reader<'a>,
    header: Header<'a>,
    base_depth: usize,
    header_line: Line<'a>,
) -> Result<Value, ToonError> {
    if header.keyed {
        return decode_keyed_object(r, &header, base_depth, header_line);
    }
    if let Some(inline) = header.inline {
        let mut values = Vec::new();
        split_delimited(inline, header.delimiter, &mut values);
        let mut items = Vec::with_capacity(values.len());
        for token in values {
            items.push(parse_primitive_token(token).map_err(|e| header_line.error(e))?);
        }
        expect_count(
            items.len(),
            header.length,
            "inline-form values",
            header_line,
        )?;
        return Ok(Value::Array(items));
    }
    match &header.fields {
        Some(fields) if !fields.is_empty() => {
            decode_tabular(r, &header, fields, base_depth, header_line)
        }
        _ => decode_list(r, &header, base_depth, header_line),
    }
}

fn expect_count(
    actual: usize,
    expected: usize,
    what: &str,
    line: Line<'_>,
) -> Result<(), ToonError> {
    if actual != expected {
        return Err(line.error(format!("Expected {expected} {what}, but got {actual}")));
    }
    Ok(())
}

/// A tabular row (not a `key: value` line): no unquoted colon, or the delimiter comes first.
fn is_data_row(content: &str, delimiter: u8) -> bool {
    // Whichever of the two comes first decides; a row without either is data.
    find_unquoted_either(content, b':', delimiter, 0)
        .is_none_or(|i| content.as_bytes()[i] == delimiter)
}

fn decode_tabular<'a>(
    r: &mut Reader<'a>,
    header: &Header<'a>,
    fields: &[Field<'_>],
    base_depth: usize,
    header_line: Line<'a>,
) -> Result<Value, ToonError> {
    let row_depth = base_depth + 1;
    let width = count_leaves(fields);
    let mut rows = Vec::with_capacity(header.length.min(r.remaining()));
    let mut cells = Vec::with_capacity(width);
    let (mut first, mut last, mut last_line) = (None, None, header_line);
    while rows.len() < header.length {
        let Some(line) = r.peek()? else { break };
        if line.depth != row_depth || !is_data_row(line.content, header.delimiter) {
            break;
        }
        first.get_or_insert(line.number);
        last = Some(line.number);
        last_line = line;
        r.advance();
        split_delimited(line.content, header.delimiter, &mut cells);
        expect_count(cells.len(), width, "tabular row values", line)?;
        rows.push(Value::Object(build_row(fields, &cells, line)?));
    }
    expect_count(rows.len(), header.length, "tabular rows", last_line)?;
    if let (Some(first), Some(last)) = (first, last) {
        r.check_no_blank_lines(first, last, "tabular array")?;
    }
    if let Some(next) = r.peek()?
        && next.depth == row_depth
        && !next.content.starts_with("- ")
        && is_data_row(next.content, header.delimiter)
    {
        return Err(next.error(format!(
            "Expected {} tabular rows, but found more",
            header.length
        )));
    }
    Ok(Value::Array(rows))
}

/// Builds one row object from its cells, following the (possibly nested) field list.
fn build_row(
    fields: &[Field<'_>],
    cells: &[&str],
    line: Line<'_>,
) -> Result<Map<String, Value>, ToonError> {
    let mut next = 0;
    build_group(fields, cells, &mut next, line)
}

fn build_group(
    fields: &[Field<'_>],
    cells: &[&str],
    next: &mut usize,
    line: Line<'_>,
) -> Result<Map<String, Value>, ToonError> {
    let mut map = Map::with_capacity(fields.len());
    for field in fields {
        let value = match &field.children {
            Some(children) => Value::Object(build_group(children, cells, next, line)?),
            None => {
                let Some(cell) = cells.get(*next) else {
                    continue;
                };
                *next += 1;
                parse_primitive_token(cell).map_err(|e| line.error(e))?
            }
        };
        map.insert(field.name.to_string(), value);
    }
    Ok(finish_object(map))
}

fn decode_keyed_object<'a>(
    r: &mut Reader<'a>,
    header: &Header<'a>,
    base_depth: usize,
    header_line: Line<'a>,
) -> Result<Value, ToonError> {
    let entry_depth = base_depth + 1;
    let fields = header.fields.as_deref().unwrap_or_default();
    let width = count_leaves(fields);
    let mut map = Map::new();
    let (mut first, mut last, mut last_line) = (None, None, header_line);
    while let Some(line) = r.peek()? {
        if line.depth <= base_depth {
            break;
        }
        if line.depth > entry_depth {
            return Err(line.error("Unexpected indentation inside keyed tabular object"));
        }
        if find_unquoted(line.content, b':', 0).is_none() {
            return Err(line.error("Expected entry row inside keyed tabular object"));
        }
        r.advance();
        first.get_or_insert(line.number);
        last = Some(line.number);
        last_line = line;
        let (key, end) = parse_key_token(line.content).map_err(|e| line.error(e))?;
        let slot = vacant(&mut map, key, line)?;
        let cells_text = trim_spaces(&line.content[end..]);
        let mut cells = Vec::with_capacity(width);
        split_delimited(cells_text, header.delimiter, &mut cells);
        expect_count(cells.len(), width, "keyed entry cells", line)?;
        slot.insert(Value::Object(build_row(fields, &cells, line)?));
    }
    expect_count(map.len(), header.length, "keyed entries", last_line)?;
    if let (Some(first), Some(last)) = (first, last) {
        r.check_no_blank_lines(first, last, "keyed tabular object")?;
    }
    Ok(Value::Object(finish_object(map)))
}

fn is_list_item(content: &str) -> bool {
    content.starts_with("- ") || content == "-"
}

fn decode_list<'a>(
    r: &mut Reader<'a>,
    header: &Header<'a>,
    base_depth: usize,
    header_line: Line<'a>,
) -> Result<Value, ToonError> {
    let item_depth = base_depth + 1;
    let mut items = Vec::with_capacity(header.length.min(r.remaining()));
    let (mut first, mut last, mut last_line) = (None, None, header_line);
    while items.len() < header.length {
        let Some(line) = r.peek()? else { break };
        if line.depth != item_depth || !is_list_item(line.content) {
            break;
        }
        first.get_or_insert(line.number);
        items.push(decode_list_item(r, item_depth)?);
        // The item may have spanned several lines; the last one read ends it.
        let end = r.last_number.unwrap_or(line.number);
        last = Some(end);
        last_line = Line {
            number: end,
            ..line
        };
    }
    expect_count(items.len(), header.length, "list-form items", last_line)?;
    if let (Some(first), Some(last)) = (first, last) {
        r.check_no_blank_lines(first, last, "list-form array")?;
    }
    if let Some(next) = r.peek()?
        && next.depth == item_depth
        && next.content.starts_with("- ")
    {
        return Err(next.error(format!(
            "Expected {} list-form items, but found more",
            header.length
        )));
    }
    Ok(Value::Array(items))
}

/// Decodes the list item starting at the next line (known to be `-` or `- …` at `base_depth`).
fn decode_list_item(r: &mut Reader<'_>, base_depth: usize) -> Result<Value, ToonError> {
    let Some(line) = r.peek()? else {
        return Ok(Value::Null);
    };
    r.advance();
    check_depth(line, base_depth)?;
    let Some(after) = line.content.strip_prefix("- ") else {
        // Only a bare "-" reaches here: an empty object.
        return Ok(Value::Object(Map::new()));
    };
    let item = line.with_content(after);
    let trimmed = trim_spaces(after);
    if trimmed.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    if trimmed == "[]" {
        return Ok(Value::Array(Vec::new()));
    }
    match resolve_header(item)? {
        Some(h) if is_array_header_content(after) => {
            // `- [N]: …` or `- [N]:` — an array item; keyless field lists are root-only.
            if h.keyed {
                return Err(item.error("Keyless keyed header is only valid at the document root"));
            }
            if h.fields.is_some() {
                return Err(item
                    .error("Keyless header with a field list is only valid at the document root"));
            }
            return decode_array_from_header(r, h, base_depth, item);
        }
        Some(mut h) if h.fields.is_some() && h.key.is_some() => {
            // `- key[N]{…}:` — a tabular (or keyed) first field, rows two levels deeper.
            let key = h.key.take().unwrap_or_default();
            let mut map = Map::new();
            let value = decode_array_from_header(r, h, base_depth + 1, item)?;
            map.insert(key, value);
            follow_sibling_fields(r, base_depth + 1, &mut map)?;
            return Ok(Value::Object(finish_object(map)));
        }
        _ => {}
    }
    if find_unquoted(after, b':', 0).is_some() {
        let mut map = Map::new();
        decode_key_value(r, item, base_depth + 1, &mut map)?;
        follow_sibling_fields(r, base_depth + 1, &mut map)?;
        return Ok(Value::Object(finish_object(map)));
    }
    parse_primitive_token(after).map_err(|e| item.error(e))
}

/// Decodes the remaining fields of a list-item object (lines at `depth`, not list items).
fn follow_sibling_fields(
    r: &mut Reader<'_>,
    depth: usize,
    map: &mut Map<String, Value>,
) -> Result<(), ToonError> {
    while let Some(next) = r.peek()? {
        if next.depth != depth || next.content.starts_with("- ") {
            break;
        }
        r.advance();
        decode_key_value(r, next, depth, map)?;
    }
    Ok(())
}

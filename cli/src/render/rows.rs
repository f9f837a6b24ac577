//! Row-only encodings of a read's rows, printed without any envelope: CSV (RFC 4180) and a
//! `|`-separated padded text grid. One definition of a cell's text serves both.

use serde_json::Value;

/// Returns the columns of `rows`: `declared` first (the projection's fields, in order), then
/// every other key in the order rows first show it.
pub fn columns(declared: &[String], rows: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(declared.len());
    for name in declared {
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    for row in rows {
        if let Value::Object(map) = row {
            for key in map.keys() {
                if !out.iter().any(|c| c == key) {
                    out.push(key.clone());
                }
            }
        }
    }
    out
}

/// Returns a value's cell text: strings as they are, numbers and booleans as JSON prints them,
/// `null` and missing values empty, arrays joined by `;` (each element by the same rule, nested
/// containers as compact JSON), objects as compact JSON.
pub fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Array(_) | Value::Object(_) => compact(item),
                other => cell(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(";"),
        Some(Value::String(s)) => s.clone(),
        Some(other) => compact(other),
    }
}

fn compact(value: &Value) -> String {
    pm_engine::json::to_compact(value)
}

/// Returns `rows` as CSV: a header line of `columns`, then one line per row, every line ended
/// by CRLF (RFC 4180). A field holding a comma, a double quote, CR or LF is quoted, quotes
/// doubled. No rows and no columns print nothing.
pub fn csv(columns: &[String], rows: &[Value]) -> String {
    let mut out = String::new();
    if columns.is_empty() {
        return out;
    }
    push_csv_line(&mut out, columns.iter().map(String::as_str));
    for row in rows {
        let cells: Vec<String> = columns.iter().map(|c| cell(row.get(c))).collect();
        push_csv_line(&mut out, cells.iter().map(String::as_str));
    }
    out
}

fn push_csv_line<'a>(out: &mut String, fields: impl Iterator<Item = &'a str>) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        if field.contains([',', '"', '\r', '\n']) {
            out.push('"');
            out.push_str(&field.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(field);
        }
    }
    out.push_str("\r\n");
}

/// Returns `rows` as a text grid: a header line, a rule of `-` joined by `-+-`, then one line
/// per row; cells are separated by ` | ` and padded with spaces to their column's widest cell
/// (counted in characters). Line breaks, tabs and `|` inside a cell are escaped as `\n`, `\r`,
/// `\t` and `\|` so every row stays on one line; trailing spaces are trimmed.
pub fn table(columns: &[String], rows: &[Value]) -> String {
    let mut out = String::new();
    if columns.is_empty() {
        return out;
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            columns
                .iter()
                .map(|c| grid_text(&cell(row.get(c))))
                .collect()
        })
        .collect();
    let header: Vec<String> = columns.iter().map(|c| grid_text(c)).collect();
    let widths: Vec<usize> = (0..columns.len())
        .map(|i| {
            body.iter()
                .map(|r| r[i].chars().count())
                .chain(std::iter::once(header[i].chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    push_grid_line(&mut out, &header, &widths);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&rule.join("-+-"));
    out.push('\n');
    for row in &body {
        push_grid_line(&mut out, row, &widths);
    }
    out
}

fn push_grid_line(out: &mut String, cells: &[String], widths: &[usize]) {
    let mut line = String::new();
    for (i, (text, width)) in cells.iter().zip(widths).enumerate() {
        if i > 0 {
            line.push_str(" | ");
        }
        line.push_str(text);
        let pad = width.saturating_sub(text.chars().count());
        line.extend(std::iter::repeat_n(' ', pad));
    }
    out.push_str(line.trim_end_matches(' '));
    out.push('\n');
}

fn grid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '|' => out.push_str("\\|"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn columns_put_declared_fields_first_then_first_seen_keys() {
        let rows = [json!({"b": 1, "x": 2}), json!({"y": 3, "a": 4})];
        assert_eq!(columns(&names(&["a", "b"]), &rows), ["a", "b", "x", "y"]);
    }

    #[test]
    fn cells_follow_one_rule() {
        assert_eq!(cell(None), "");
        assert_eq!(cell(Some(&json!(null))), "");
        assert_eq!(cell(Some(&json!("a,b"))), "a,b");
        assert_eq!(cell(Some(&json!(2))), "2");
        assert_eq!(cell(Some(&json!(true))), "true");
        assert_eq!(
            cell(Some(&json!(["x", 1, {"k": "v"}]))),
            "x;1;{\"k\":\"v\"}"
        );
        assert_eq!(cell(Some(&json!({"k": [1]}))), "{\"k\":[1]}");
    }

    #[test]
    fn csv_quotes_only_what_rfc_4180_requires() {
        let rows = [
            json!({"id": "a", "title": "plain", "tags": ["x", "y"]}),
            json!({"id": "b", "title": "say \"hi\", then\nleave"}),
        ];
        let out = csv(&names(&["id", "title", "tags"]), &rows);
        assert_eq!(
            out,
            "id,title,tags\r\na,plain,x;y\r\nb,\"say \"\"hi\"\", then\nleave\",\r\n"
        );
    }

    #[test]
    fn csv_of_nothing_is_empty_and_of_no_rows_is_the_header() {
        assert_eq!(csv(&[], &[]), "");
        assert_eq!(csv(&names(&["id"]), &[]), "id\r\n");
    }

    #[test]
    fn table_pads_by_characters_and_keeps_rows_on_one_line() {
        let rows = [
            json!({"id": "pm-1", "title": "é|x"}),
            json!({"id": "pm-22", "title": "two\nlines"}),
        ];
        let out = table(&names(&["id", "title"]), &rows);
        assert_eq!(
            out,
            "id    | title\n------+-----------\npm-1  | é\\|x\npm-22 | two\\nlines\n"
        );
    }
}

//! Query plans of the page reads.

use super::*;
use pm_engine::query::{Query, Sort, StatusFilter};

fn plan(conn: &Connection, sql: &str, args: &[SqlValue]) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
    let mut args = args.to_vec();
    args.extend([SqlValue::Integer(21), SqlValue::Integer(0)]);
    let details: Vec<String> = stmt
        .query_map(params_from_iter(args), |r| r.get(3))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(details.join("; "))
}

/// A bounded page in the default order picks its rows from the covering order index (and
/// stops after the page), whatever the filter's own index; other orders and unbounded pages
/// are left to the planner.
#[test]
fn a_default_order_page_scans_the_order_index() -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = Connection::open_in_memory()?;
    crate::store::register_functions(&conn)?;
    crate::schema::apply(&mut conn)?;
    let query = Query {
        status: StatusFilter::Set(vec!["open".into()]),
        ..Query::default()
    };
    let Clause { sql: filter, args } = where_clause(&query);
    let order = order_by(&Sort::default_order());
    let found = plan(
        &conn,
        &page_sql("light_json", &filter, &order, true, true),
        &args,
    )?;
    assert!(
        found.contains("SCAN items USING COVERING INDEX items_default_order"),
        "{found}"
    );
    assert!(!found.contains("items_status"), "{found}");
    let unbounded = plan(
        &conn,
        &page_sql("light_json", &filter, &order, false, true),
        &args,
    )?;
    assert!(!unbounded.contains("MATERIALIZE"), "{unbounded}");
    Ok(())
}

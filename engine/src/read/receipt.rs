//! pm's `omission_receipt`: which field groups a read left out and the
//! flag that restores each. Every read result carries one, complete results included.

use serde::Serialize;

/// A field group a result may omit, and how to get it back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldGroup {
    /// The group name (`body`, `comments`, `raw_history`, `diagnostic_rows`, …).
    pub name: String,
    /// The flag that restores it (`--fields comments`, `--full`).
    pub restore_with: String,
}

impl FieldGroup {
    /// Returns a field group.
    pub fn new(name: impl Into<String>, restore_with: impl Into<String>) -> FieldGroup {
        FieldGroup {
            name: name.into(),
            restore_with: restore_with.into(),
        }
    }
}

/// `{has_omissions, omitted_field_group_count, omitted_field_groups}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OmissionReceipt {
    /// Whether anything was omitted.
    pub has_omissions: bool,
    /// The number of omitted groups.
    pub omitted_field_group_count: usize,
    /// The omitted groups, in declaration order (kept as `[]` in TOON when empty).
    pub omitted_field_groups: Vec<FieldGroup>,
}

impl OmissionReceipt {
    /// Returns the receipt of a result that omitted `groups`.
    pub fn omitted(groups: Vec<FieldGroup>) -> OmissionReceipt {
        OmissionReceipt {
            has_omissions: !groups.is_empty(),
            omitted_field_group_count: groups.len(),
            omitted_field_groups: groups,
        }
    }

    /// Returns the receipt of a complete result.
    pub fn complete() -> OmissionReceipt {
        OmissionReceipt::omitted(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_the_groups() {
        let receipt = OmissionReceipt::omitted(vec![FieldGroup::new("raw_history", "--full")]);
        assert!(receipt.has_omissions);
        assert_eq!(receipt.omitted_field_group_count, 1);
        let complete = OmissionReceipt::complete();
        assert!(!complete.has_omissions);
        assert_eq!(complete.omitted_field_group_count, 0);
    }
}

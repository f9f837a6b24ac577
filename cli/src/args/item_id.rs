//! The item a single-item command acts on: the `ID` operand or `--id <item-id>` (pm accepts
//! both spellings on every such command; scripts generated from its contract use `--id`).

use crate::failure::{CliError, Result, UsageKind};

/// The item id, as an operand or as `--id`
#[derive(Debug, Default, clap::Args)]
pub struct ItemId {
    /// The item id (or use --id)
    #[arg(value_name = "ID", required_unless_present = "item_flag")]
    pub operand: Option<String>,

    /// The item id, as a flag
    #[arg(long = "id", id = "item_flag", value_name = "ITEM-ID")]
    pub flag: Option<String>,
}

impl ItemId {
    /// Returns the id given; both spellings must agree when both are given.
    ///
    /// # Errors
    /// A usage error when neither or two different ids are given.
    pub fn get(&self) -> Result<&str> {
        match (&self.operand, &self.flag) {
            (Some(a), Some(b)) if a != b => Err(usage(
                UsageKind::UnexpectedArgument,
                format!("the operand {a} and --id {b} name different items; give one"),
            )),
            (Some(id), _) | (None, Some(id)) => Ok(id),
            (None, None) => Err(usage(
                UsageKind::MissingRequiredArgument,
                "the item id is required (operand or --id)".into(),
            )),
        }
    }
}

fn usage(kind: UsageKind, detail: String) -> CliError {
    CliError::Usage {
        kind,
        detail,
        flag: Some("--id".into()),
        value: None,
        suggestions: Box::new([]),
        allowed: Box::new([]),
    }
}

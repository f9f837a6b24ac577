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

impl ItemId {
    /// Returns the id and the next operand of a command whose id is followed by another
    /// operand (`append <id> [text]`, `restore <id> <version>`): with `--id`, the first
    /// operand is that next one (`pm append --id X 'text'`).
    ///
    /// # Errors
    /// A usage error when neither or two different ids are given, or an operand is left over.
    pub fn with_next<'a>(&'a self, next: Option<&'a str>) -> Result<(&'a str, Option<&'a str>)> {
        match (self.flag.as_deref(), self.operand.as_deref(), next) {
            (Some(id), Some(operand), None) => Ok((id, Some(operand))),
            (Some(id), Some(operand), Some(next)) if operand == id => Ok((id, Some(next))),
            (Some(id), Some(_), Some(next)) => Err(usage(
                UsageKind::UnexpectedArgument,
                format!("with --id {id}, the operand {next} is one too many"),
            )),
            _ => Ok((self.get()?, next)),
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

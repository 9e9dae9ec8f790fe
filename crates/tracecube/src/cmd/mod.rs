//! One module per subcommand.

pub mod count;
pub mod dump;
pub mod info;

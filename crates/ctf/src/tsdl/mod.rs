//! The TSDL (CTF 1.8) metadata front end: text → tokens → syntax tree → [`crate::ir`].

mod ast;
mod lexer;
mod lower;
mod parser;
mod types;

pub use lower::parse_tsdl;

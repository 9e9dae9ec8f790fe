//! placeholder
pub mod error;
pub mod ir;
pub mod tsdl;
pub mod bits;
pub mod ctf2;
pub mod metadata;
pub mod plan;
pub mod decode;
pub mod clock; pub mod index; pub mod trace;
pub mod stream;
pub mod merge;
pub mod dump;

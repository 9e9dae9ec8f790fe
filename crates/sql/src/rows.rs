//! Rows of Rust values (the analyses' report rows) appended straight to typed Arrow
//! column builders through serde: no JSON value per row, no JSON decoding.
//!
//! A row is a struct that serialises ([`RowBuilder::push`]): each field named like a
//! column of the schema is appended to that column's builder, the other fields are
//! skipped (not even serialised), and columns no field named get a `NULL`. Numbers
//! are converted to the column's type (an error names the column when one does not
//! fit); `None`, and floats that are not finite, are `NULL` (as the JSON rows they
//! replace had them: JSON has no NaN); an enum's unit variant is its name.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder, UInt32Builder, UInt64Builder};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use serde::ser::{Impossible, SerializeStruct, Serializer};
use serde::Serialize;

/// A value given beside a row's own fields ([`RowBuilder::push_with`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar<'a> {
    /// `NULL`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer of any width.
    Int(i128),
    /// A float.
    Float(f64),
    /// Text.
    Str(&'a str),
}

/// The builder of one column.
enum Column {
    Bool(BooleanBuilder),
    I32(Int32Builder),
    I64(Int64Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    F64(Float64Builder),
    Utf8(StringBuilder),
}

impl Column {
    fn new(t: &DataType) -> Result<Column> {
        Ok(match t {
            DataType::Boolean => Column::Bool(BooleanBuilder::new()),
            DataType::Int32 => Column::I32(Int32Builder::new()),
            DataType::Int64 => Column::I64(Int64Builder::new()),
            DataType::UInt32 => Column::U32(UInt32Builder::new()),
            DataType::UInt64 => Column::U64(UInt64Builder::new()),
            DataType::Float64 => Column::F64(Float64Builder::new()),
            DataType::Utf8 => Column::Utf8(StringBuilder::new()),
            t => return Err(DataFusionError::Internal(format!("rows: no builder for columns of type {t}"))),
        })
    }

    fn null(&mut self) {
        match self {
            Column::Bool(b) => b.append_null(),
            Column::I32(b) => b.append_null(),
            Column::I64(b) => b.append_null(),
            Column::U32(b) => b.append_null(),
            Column::U64(b) => b.append_null(),
            Column::F64(b) => b.append_null(),
            Column::Utf8(b) => b.append_null(),
        }
    }

    /// Appends `v`; the error says why it does not fit (the caller names the column).
    fn append(&mut self, v: Scalar) -> std::result::Result<(), String> {
        let int = |x: i128, ty: &str| format!("{x} does not fit a {ty}");
        match (self, v) {
            (c, Scalar::Null) => c.null(),
            (Column::F64(b), Scalar::Float(x)) if !x.is_finite() => b.append_null(),
            (Column::F64(b), Scalar::Float(x)) => b.append_value(x),
            (Column::F64(b), Scalar::Int(x)) => b.append_value(x as f64),
            (Column::Bool(b), Scalar::Bool(x)) => b.append_value(x),
            (Column::I32(b), Scalar::Int(x)) => b.append_value(i32::try_from(x).map_err(|_| int(x, "32-bit integer"))?),
            (Column::I64(b), Scalar::Int(x)) => b.append_value(i64::try_from(x).map_err(|_| int(x, "64-bit integer"))?),
            (Column::U32(b), Scalar::Int(x)) => b.append_value(u32::try_from(x).map_err(|_| int(x, "32-bit unsigned integer"))?),
            (Column::U64(b), Scalar::Int(x)) => b.append_value(u64::try_from(x).map_err(|_| int(x, "64-bit unsigned integer"))?),
            (Column::Utf8(b), Scalar::Str(s)) => b.append_value(s),
            (_, v) => return Err(format!("{v:?} is not of the column's type")),
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Bool(b) => Arc::new(b.finish()),
            Column::I32(b) => Arc::new(b.finish()),
            Column::I64(b) => Arc::new(b.finish()),
            Column::U32(b) => Arc::new(b.finish()),
            Column::U64(b) => Arc::new(b.finish()),
            Column::F64(b) => Arc::new(b.finish()),
            Column::Utf8(b) => Arc::new(b.finish()),
        }
    }
}

/// Builds one record batch of a schema, row by row.
pub struct RowBuilder {
    schema: SchemaRef,
    cols: Vec<Column>,
    /// Whether each column has its value of the row being appended.
    set: Vec<bool>,
    rows: usize,
}

impl RowBuilder {
    /// A builder of `schema`'s columns (booleans, 32- and 64-bit integers, doubles
    /// and text).
    pub fn new(schema: SchemaRef) -> Result<RowBuilder> {
        let cols = schema.fields().iter().map(|f| Column::new(f.data_type())).collect::<Result<Vec<_>>>()?;
        Ok(RowBuilder { set: vec![false; cols.len()], cols, schema, rows: 0 })
    }

    /// Appends the row `row` (a struct).
    pub fn push<T: Serialize + ?Sized>(&mut self, row: &T) -> Result<()> {
        self.push_with(row, &[])
    }

    /// Appends the row `row` (a struct) with the named values `extra` (a name that is
    /// no column is ignored; a row's own field of the same name wins). After an error
    /// the builder is to be dropped: the row may be half appended.
    pub fn push_with<T: Serialize + ?Sized>(&mut self, row: &T, extra: &[(&str, Scalar)]) -> Result<()> {
        row.serialize(RowSer { b: self }).map_err(|e| DataFusionError::Execution(e.0))?;
        for (name, v) in extra {
            self.field(name, |c| c.append(*v).map_err(Error)).map_err(|e| DataFusionError::Execution(e.0))?;
        }
        for (c, set) in self.cols.iter_mut().zip(&mut self.set) {
            if !*set {
                c.null();
            }
            *set = false;
        }
        self.rows += 1;
        Ok(())
    }

    /// The rows appended so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Appends to column `name` with `f`, unless it is no column or has its value.
    fn field(&mut self, name: &str, f: impl FnOnce(&mut Column) -> std::result::Result<(), Error>) -> std::result::Result<(), Error> {
        // (`find`, not `index_of`: a name that is no column is common, once a scan
        // projects, and `index_of` formats an error for it.)
        match self.schema.fields().find(name).map(|(i, _)| i) {
            Some(i) if !self.set[i] => {
                f(&mut self.cols[i]).map_err(|e| Error(format!("column {name}: {}", e.0)))?;
                self.set[i] = true;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The batch of the rows appended (of a schema without columns: their count).
    pub fn finish(mut self) -> Result<RecordBatch> {
        let cols = self.cols.iter_mut().map(Column::finish).collect();
        let opts = datafusion::arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(self.rows));
        Ok(RecordBatch::try_new_with_options(self.schema, cols, &opts)?)
    }
}

/// Why a row could not be appended.
#[derive(Debug)]
struct Error(String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl serde::ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Error {
        Error(msg.to_string())
    }
}

/// Serialises a row: a struct whose fields go to their columns.
struct RowSer<'b> {
    b: &'b mut RowBuilder,
}

/// Serialises one field's value into its column.
struct FieldSer<'c> {
    col: &'c mut Column,
}

impl FieldSer<'_> {
    fn put(self, v: Scalar) -> std::result::Result<(), Error> {
        self.col.append(v).map_err(Error)
    }
}

/// The errors of what a row or a field cannot be.
fn not_a(what: &str) -> Error {
    Error(format!("a row's field cannot be {what}"))
}

impl<'c> Serializer for FieldSer<'c> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> std::result::Result<(), Error> {
        self.put(Scalar::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(v.into()))
    }
    fn serialize_i128(self, v: i128) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(v))
    }
    fn serialize_u8(self, v: u8) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(v.into()))
    }
    fn serialize_u128(self, v: u128) -> std::result::Result<(), Error> {
        self.put(Scalar::Int(i128::try_from(v).map_err(|_| Error(format!("{v} is too large")))?))
    }
    fn serialize_f32(self, v: f32) -> std::result::Result<(), Error> {
        self.put(Scalar::Float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> std::result::Result<(), Error> {
        self.put(Scalar::Float(v))
    }
    fn serialize_char(self, v: char) -> std::result::Result<(), Error> {
        self.put(Scalar::Str(v.encode_utf8(&mut [0; 4])))
    }
    fn serialize_str(self, v: &str) -> std::result::Result<(), Error> {
        self.put(Scalar::Str(v))
    }
    fn serialize_bytes(self, _v: &[u8]) -> std::result::Result<(), Error> {
        Err(not_a("bytes"))
    }
    fn serialize_none(self) -> std::result::Result<(), Error> {
        self.put(Scalar::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> std::result::Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> std::result::Result<(), Error> {
        self.put(Scalar::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> std::result::Result<(), Error> {
        self.put(Scalar::Null)
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> std::result::Result<(), Error> {
        self.put(Scalar::Str(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> std::result::Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> std::result::Result<(), Error> {
        Err(not_a("an enum with data"))
    }
    fn serialize_seq(self, _len: Option<usize>) -> std::result::Result<Self::SerializeSeq, Error> {
        Err(not_a("a list"))
    }
    fn serialize_tuple(self, _len: usize) -> std::result::Result<Self::SerializeTuple, Error> {
        Err(not_a("a tuple"))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> std::result::Result<Self::SerializeTupleStruct, Error> {
        Err(not_a("a tuple"))
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> std::result::Result<Self::SerializeTupleVariant, Error> {
        Err(not_a("an enum with data"))
    }
    fn serialize_map(self, _len: Option<usize>) -> std::result::Result<Self::SerializeMap, Error> {
        Err(not_a("a map"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> std::result::Result<Self::SerializeStruct, Error> {
        Err(not_a("a struct"))
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> std::result::Result<Self::SerializeStructVariant, Error> {
        Err(not_a("an enum with data"))
    }
}

impl SerializeStruct for RowSer<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> std::result::Result<(), Error> {
        self.b.field(key, |col| value.serialize(FieldSer { col }))
    }

    fn end(self) -> std::result::Result<(), Error> {
        Ok(())
    }
}

/// The error of a row that is not a struct.
fn not_a_struct(what: &str) -> Error {
    Error(format!("a row must be a struct, not {what}"))
}

impl<'b> Serializer for RowSer<'b> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_struct(self, _name: &'static str, _len: usize) -> std::result::Result<Self, Error> {
        Ok(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> std::result::Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_bool(self, _: bool) -> std::result::Result<(), Error> {
        Err(not_a_struct("a boolean"))
    }
    fn serialize_i8(self, _: i8) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_i16(self, _: i16) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_i32(self, _: i32) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_i64(self, _: i64) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_u8(self, _: u8) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_u16(self, _: u16) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_u32(self, _: u32) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_u64(self, _: u64) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_f32(self, _: f32) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_f64(self, _: f64) -> std::result::Result<(), Error> {
        Err(not_a_struct("a number"))
    }
    fn serialize_char(self, _: char) -> std::result::Result<(), Error> {
        Err(not_a_struct("text"))
    }
    fn serialize_str(self, _: &str) -> std::result::Result<(), Error> {
        Err(not_a_struct("text"))
    }
    fn serialize_bytes(self, _: &[u8]) -> std::result::Result<(), Error> {
        Err(not_a_struct("bytes"))
    }
    fn serialize_none(self) -> std::result::Result<(), Error> {
        Err(not_a_struct("nothing"))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> std::result::Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> std::result::Result<(), Error> {
        Err(not_a_struct("nothing"))
    }
    fn serialize_unit_struct(self, _: &'static str) -> std::result::Result<(), Error> {
        Err(not_a_struct("nothing"))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> std::result::Result<(), Error> {
        Err(not_a_struct("an enum"))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> std::result::Result<(), Error> {
        Err(not_a_struct("an enum"))
    }
    fn serialize_seq(self, _: Option<usize>) -> std::result::Result<Self::SerializeSeq, Error> {
        Err(not_a_struct("a list"))
    }
    fn serialize_tuple(self, _: usize) -> std::result::Result<Self::SerializeTuple, Error> {
        Err(not_a_struct("a tuple"))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> std::result::Result<Self::SerializeTupleStruct, Error> {
        Err(not_a_struct("a tuple"))
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> std::result::Result<Self::SerializeTupleVariant, Error> {
        Err(not_a_struct("an enum"))
    }
    fn serialize_map(self, _: Option<usize>) -> std::result::Result<Self::SerializeMap, Error> {
        Err(not_a_struct("a map"))
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> std::result::Result<Self::SerializeStructVariant, Error> {
        Err(not_a_struct("an enum"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::{Field, Float64Type, Int32Type, Schema, UInt64Type};

    #[derive(Serialize)]
    enum Kind {
        #[serde(rename = "read")]
        Read,
    }

    #[derive(Serialize)]
    struct Row {
        tid: i32,
        bytes: u64,
        kind: Kind,
        path: Option<String>,
        mean: f64,
        skipped: Vec<u8>,
    }

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("trace", DataType::Utf8, true),
            Field::new("tid", DataType::Int32, true),
            Field::new("bytes", DataType::UInt64, true),
            Field::new("kind", DataType::Utf8, true),
            Field::new("path", DataType::Utf8, true),
            Field::new("mean", DataType::Float64, true),
            Field::new("absent", DataType::Boolean, true),
        ]))
    }

    #[test]
    fn fields_go_to_their_typed_columns_and_the_rest_is_null() {
        let mut b = RowBuilder::new(schema()).unwrap();
        let r = Row { tid: 7, bytes: u64::MAX, kind: Kind::Read, path: Some("/a".into()), mean: 1.5, skipped: vec![1] };
        b.push_with(&r, &[("trace", Scalar::Str("host")), ("tid", Scalar::Int(9)), ("nope", Scalar::Int(1))]).unwrap();
        let r = Row { tid: -1, bytes: 0, kind: Kind::Read, path: None, mean: f64::NAN, skipped: vec![] };
        b.push(&r).unwrap();
        assert_eq!(b.rows(), 2);
        let batch = b.finish().unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.column(0).as_string::<i32>().value(0), "host");
        assert!(batch.column(0).is_null(1));
        // The row's own field wins over an extra value of the same name.
        assert_eq!(batch.column(1).as_primitive::<Int32Type>().values().to_vec(), vec![7, -1]);
        assert_eq!(batch.column(2).as_primitive::<UInt64Type>().value(0), u64::MAX);
        assert_eq!(batch.column(3).as_string::<i32>().value(1), "read");
        assert!(batch.column(4).is_null(1) && !batch.column(4).is_null(0));
        assert_eq!(batch.column(5).as_primitive::<Float64Type>().value(0), 1.5);
        assert!(batch.column(5).is_null(1), "NaN is NULL, as in JSON");
        assert_eq!(batch.column(6).null_count(), 2);
    }

    #[test]
    fn a_value_that_does_not_fit_names_its_column() {
        #[derive(Serialize)]
        struct Big {
            tid: u64,
        }
        let mut b = RowBuilder::new(schema()).unwrap();
        let e = b.push(&Big { tid: u64::MAX }).unwrap_err().to_string();
        assert!(e.contains("column tid") && e.contains("does not fit a 32-bit integer"), "{e}");
        let e = b.push(&7u32).unwrap_err().to_string();
        assert!(e.contains("a row must be a struct"), "{e}");
    }
}

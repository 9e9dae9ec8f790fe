//! A table of typed, nullable columns, filled row by row: what every export writes.
//!
//! A column's type is fixed by its first value. A later value of another type is
//! widened when that loses nothing (an unsigned or signed integer into a float
//! column, a non-negative signed one into an unsigned column, a small unsigned one
//! into a signed column); otherwise it is stored as null and counted in
//! [`Table::conflicts`], so nothing is lost silently.

/// One value of a cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Absent.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A floating-point number.
    Float(f64),
    /// Text.
    Text(String),
    /// A boolean.
    Bool(bool),
}

/// The values of one column (nulls as `None`).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// No value yet: the type is not known.
    Unknown(usize),
    /// Signed 64-bit integers.
    Int(Vec<Option<i64>>),
    /// Unsigned 64-bit integers.
    UInt(Vec<Option<u64>>),
    /// 64-bit floats.
    Float(Vec<Option<f64>>),
    /// UTF-8 text.
    Text(Vec<Option<String>>),
    /// Booleans.
    Bool(Vec<Option<bool>>),
}

impl Values {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Values::Unknown(n) => *n,
            Values::Int(v) => v.len(),
            Values::UInt(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Text(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Same type, no rows.
    fn emptied(&self) -> Values {
        match self {
            Values::Unknown(_) => Values::Unknown(0),
            Values::Int(_) => Values::Int(Vec::new()),
            Values::UInt(_) => Values::UInt(Vec::new()),
            Values::Float(_) => Values::Float(Vec::new()),
            Values::Text(_) => Values::Text(Vec::new()),
            Values::Bool(_) => Values::Bool(Vec::new()),
        }
    }

    /// Appends `v`; false when it does not fit the column's type (a null is
    /// appended instead).
    fn push(&mut self, v: Value) -> bool {
        if let Values::Unknown(n) = *self {
            *self = match &v {
                Value::Null => {
                    *self = Values::Unknown(n + 1);
                    return true;
                }
                Value::Int(_) => Values::Int(vec![None; n]),
                Value::UInt(_) => Values::UInt(vec![None; n]),
                Value::Float(_) => Values::Float(vec![None; n]),
                Value::Text(_) => Values::Text(vec![None; n]),
                Value::Bool(_) => Values::Bool(vec![None; n]),
            };
        }
        let (fits, _) = match (self, v) {
            (Values::Int(c), Value::Int(x)) => (true, c.push(Some(x))),
            (Values::Int(c), Value::UInt(x)) if x <= i64::MAX as u64 => (true, c.push(Some(x as i64))),
            (Values::UInt(c), Value::UInt(x)) => (true, c.push(Some(x))),
            (Values::UInt(c), Value::Int(x)) if x >= 0 => (true, c.push(Some(x as u64))),
            (Values::Float(c), Value::Float(x)) => (true, c.push(Some(x))),
            (Values::Float(c), Value::Int(x)) => (true, c.push(Some(x as f64))),
            (Values::Float(c), Value::UInt(x)) => (true, c.push(Some(x as f64))),
            (Values::Text(c), Value::Text(x)) => (true, c.push(Some(x))),
            (Values::Bool(c), Value::Bool(x)) => (true, c.push(Some(x))),
            (c, v) => {
                c.push_null();
                (matches!(v, Value::Null), ())
            }
        };
        fits
    }

    fn push_null(&mut self) {
        match self {
            Values::Unknown(n) => *n += 1,
            Values::Int(v) => v.push(None),
            Values::UInt(v) => v.push(None),
            Values::Float(v) => v.push(None),
            Values::Text(v) => v.push(None),
            Values::Bool(v) => v.push(None),
        }
    }

    /// The value of row `i` (null past the end).
    pub fn get(&self, i: usize) -> Value {
        let o = |x: Option<Value>| x.unwrap_or(Value::Null);
        match self {
            Values::Unknown(_) => Value::Null,
            Values::Int(v) => o(v.get(i).copied().flatten().map(Value::Int)),
            Values::UInt(v) => o(v.get(i).copied().flatten().map(Value::UInt)),
            Values::Float(v) => o(v.get(i).copied().flatten().map(Value::Float)),
            Values::Text(v) => o(v.get(i).cloned().flatten().map(Value::Text)),
            Values::Bool(v) => o(v.get(i).copied().flatten().map(Value::Bool)),
        }
    }
}

/// A named column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Its values.
    pub values: Values,
}

/// A table: columns of equal length, filled a row at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Table name (the exported file's name, without extension).
    pub name: String,
    /// Columns, in order of first appearance.
    pub columns: Vec<Column>,
    rows: usize,
    /// Values stored as null because their type did not fit their column.
    pub conflicts: u64,
}

impl Table {
    /// An empty table.
    pub fn new(name: &str) -> Table {
        Table { name: name.into(), columns: Vec::new(), rows: 0, conflicts: 0 }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Appends a row of `(column, value)` pairs; columns not named get a null, new
    /// names add a column (null in the earlier rows).
    pub fn push_row<I: IntoIterator<Item = (S, Value)>, S: AsRef<str>>(&mut self, row: I) {
        for (name, v) in row {
            let name = name.as_ref();
            let i = match self.columns.iter().position(|c| c.name == name) {
                Some(i) => i,
                None => {
                    self.columns.push(Column { name: name.into(), values: Values::Unknown(self.rows) });
                    self.columns.len() - 1
                }
            };
            let c = &mut self.columns[i].values;
            if c.len() > self.rows {
                // The same column twice in one row: keep the first.
                continue;
            }
            if !c.push(v) {
                self.conflicts += 1;
            }
        }
        self.rows += 1;
        for c in &mut self.columns {
            while c.values.len() < self.rows {
                c.values.push_null();
            }
        }
    }

    /// The same columns with no rows (to start the next batch of a streamed table).
    pub fn emptied(&self) -> Table {
        let columns = self.columns.iter().map(|c| Column { name: c.name.clone(), values: c.values.emptied() }).collect();
        Table { name: self.name.clone(), columns, rows: 0, conflicts: 0 }
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&Values> {
        self.columns.iter().find(|c| c.name == name).map(|c| &c.values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_with_new_columns_and_conflicts() {
        let mut t = Table::new("t");
        t.push_row([("a", Value::UInt(1))]);
        t.push_row([("a", Value::Int(2)), ("b", Value::Text("x".into()))]);
        t.push_row([("a", Value::Text("oops".into())), ("b", Value::Null)]);
        assert_eq!(t.rows(), 3);
        assert_eq!(t.column("a"), Some(&Values::UInt(vec![Some(1), Some(2), None])));
        assert_eq!(t.column("b"), Some(&Values::Text(vec![None, Some("x".into()), None])));
        assert_eq!(t.conflicts, 1);
        let mut f = Table::new("f");
        f.push_row([("x", Value::Null)]);
        f.push_row([("x", Value::Float(0.5))]);
        f.push_row([("x", Value::Int(-2))]);
        assert_eq!(f.column("x"), Some(&Values::Float(vec![None, Some(0.5), Some(-2.0)])));
        assert_eq!(f.emptied().rows(), 0);
        assert_eq!(f.emptied().columns.len(), 1);
    }
}

//! Checked scalar types for scenario keys: a range error names the key and its line like a type error does.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// A number as written: TOML distinguishes integers from floats.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(x) => write!(f, "{x}"),
        }
    }
}

/// Deserialises any number and hands it to `check`, which says whether it is acceptable.
fn number<'de, D: Deserializer<'de>, T>(
    d: D,
    expect: &'static str,
    check: fn(Num) -> Option<T>,
) -> Result<T, D::Error> {
    struct V(&'static str);
    impl Visitor<'_> for V {
        type Value = Num;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
            Ok(Num::Int(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
            i64::try_from(v).map(Num::Int).map_err(|_| E::custom(format!("expected {}, found {v}", self.0)))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
            Ok(Num::Float(v))
        }
    }
    let n = d.deserialize_any(V(expect))?;
    check(n).ok_or_else(|| de::Error::custom(format!("expected {expect}, found {n}")))
}

macro_rules! checked {
    ($(#[$doc:meta])* $name:ident($inner:ty), $schema:ty, $expect:literal, $check:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let mut s = <$schema as JsonSchema>::json_schema(g);
                s.insert("description".into(), concat!("must be ", $expect).into());
                s
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                number(d, $expect, $check).map($name)
            }
        }
    };
}

fn float(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(x) => x,
    }
}

checked!(
    /// An integer of at least 1.
    PositiveInt(u32), u32, "a positive integer",
    |n| match n { Num::Int(i) if i >= 1 => u32::try_from(i).ok(), _ => None }
);
checked!(
    /// An integer of at least 0.
    Count(u64), u64, "a non-negative integer",
    |n| match n { Num::Int(i) => u64::try_from(i).ok(), Num::Float(_) => None }
);
checked!(
    /// A finite number greater than 0.
    Positive(f64), f64, "a positive number",
    |n| Some(float(n)).filter(|x| x.is_finite() && *x > 0.0)
);
checked!(
    /// A number between 0 and 1.
    Fraction(f64), f64, "a number between 0 and 1",
    |n| Some(float(n)).filter(|x| (0.0..=1.0).contains(x))
);
checked!(
    /// A finite number of at least 0.
    NonNegative(f64), f64, "a non-negative number",
    |n| Some(float(n)).filter(|x| x.is_finite() && *x >= 0.0)
);

impl PositiveInt {
    /// One: the default size of a group.
    pub fn one() -> PositiveInt {
        PositiveInt(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct T {
        n: PositiveInt,
        x: Positive,
    }

    #[test]
    fn ranges_are_checked_with_the_value_found() {
        let ok: T = toml::from_str("n = 3\nx = 2").unwrap();
        assert_eq!((ok.n.0, ok.x.0), (3, 2.0));
        let e = toml::from_str::<T>("n = -3\nx = 2").unwrap_err();
        assert!(e.to_string().contains("expected a positive integer, found -3"), "{e}");
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = toml::from_str::<T>("n = 1\nx = 0.0").unwrap_err();
        assert!(e.message().contains("expected a positive number, found 0"), "{e}");
        let e = toml::from_str::<T>("n = 1.5\nx = 1").unwrap_err();
        assert!(e.message().contains("expected a positive integer, found 1.5"), "{e}");
        let e = toml::from_str::<T>("n = \"a\"\nx = 1").unwrap_err();
        assert!(e.message().contains("expected a positive integer"), "{e}");
    }
}

//! Checked scalar types for scenario keys: a range error names the key and its line like a type error does, and
//! says the cap when the value is beyond one ([`super::limits`]).

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use super::limits::{MAX_AGENTS, MAX_JOBS, MAX_PRICE, MAX_REPLICATIONS, MAX_TIME, MIN_INTERVAL, SPEEDS, short};

/// A number as written: TOML distinguishes integers from floats.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn float(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(x) => f.write_str(&short(*x)),
        }
    }
}

/// What a checked type expects: the same words serve the error message and `gridmarket schema`.
type Expect = fn() -> String;

/// Deserialises any number and hands it to `check`, which returns the value or what was expected instead.
fn number<'de, D: Deserializer<'de>, T>(
    d: D,
    expect: Expect,
    check: fn(Num) -> Result<T, String>,
) -> Result<T, D::Error> {
    struct V(Expect);
    impl Visitor<'_> for V {
        type Value = Num;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&(self.0)())
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
            Ok(Num::Int(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
            i64::try_from(v).map(Num::Int).map_err(|_| E::custom(format!("expected {}, found {v}", (self.0)())))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
            Ok(Num::Float(v))
        }
    }
    let n = d.deserialize_any(V(expect))?;
    check(n).map_err(|expected| de::Error::custom(format!("expected {expected}, found {n}")))
}

macro_rules! checked {
    ($(#[$doc:meta])* $name:ident($inner:ty), $schema:ty, $expect:expr, $check:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl $name {
            /// What the type accepts, in words.
            pub fn expect() -> String {
                $expect
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let mut s = <$schema as JsonSchema>::json_schema(g);
                s.insert("description".into(), format!("must be {}", $name::expect()).into());
                s
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                number(d, $name::expect, $check).map($name)
            }
        }
    };
}

/// An integer in `1..=max`, refused with `what` (e.g. "a positive integer") below and with the cap above.
fn int_up_to(n: Num, max: u64, what: &str, cap: &str) -> Result<u64, String> {
    match n {
        Num::Int(i) if i >= 1 && i as u64 <= max => Ok(i as u64),
        Num::Int(i) if i >= 1 => Err(format!("{what} up to {max}{cap}")),
        _ => Err(what.to_string()),
    }
}

/// A finite number in `[lo, hi]`, or what was expected (`what` and the range).
fn within(n: Num, lo: f64, hi: f64, what: &str) -> Result<f64, String> {
    let x = n.float();
    if x.is_finite() && lo <= x && x <= hi { Ok(x) } else { Err(format!("{what} from {} to {}", short(lo), short(hi))) }
}

checked!(
    /// An integer of at least 1 (and below 2^32).
    PositiveInt(u32), u32, "a positive integer".into(),
    |n| int_up_to(n, u64::from(u32::MAX), "a positive integer", "").map(|i| i as u32)
);
checked!(
    /// A finite number greater than 0.
    Positive(f64), f64, "a positive number".into(),
    |n| Some(n.float()).filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| "a positive number".into())
);
checked!(
    /// A number between 0 and 1.
    Fraction(f64), f64, "a number between 0 and 1".into(),
    |n| Some(n.float()).filter(|x| (0.0..=1.0).contains(x)).ok_or_else(|| "a number between 0 and 1".into())
);
checked!(
    /// A finite number of at least 0.
    NonNegative(f64), f64, "a non-negative number".into(),
    |n| Some(n.float()).filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| "a non-negative number".into())
);
checked!(
    /// The size of an agent group: 1 to [`MAX_AGENTS`].
    GroupSize(u32), u32, format!("a positive integer up to {MAX_AGENTS}"),
    |n| int_up_to(n, MAX_AGENTS as u64, "a positive integer", " (agents per scenario)").map(|i| i as u32)
);
checked!(
    /// A number of jobs: 1 to [`MAX_JOBS`].
    JobCount(u64), u64, format!("a positive integer up to {MAX_JOBS}"),
    |n| int_up_to(n, MAX_JOBS, "a positive integer", " (jobs per workload)")
);
checked!(
    /// Replications of a sweep point: 1 to [`MAX_REPLICATIONS`].
    Replications(u32), u32, format!("a positive integer up to {MAX_REPLICATIONS}"),
    |n| int_up_to(n, u64::from(MAX_REPLICATIONS), "a positive integer", "").map(|i| i as u32)
);
checked!(
    /// A time or duration \[s\]: greater than 0, at most [`MAX_TIME`].
    Seconds(f64), f64, format!("a positive number of seconds up to {}", short(MAX_TIME)),
    |n| match n.float() {
        x if x > 0.0 && x <= MAX_TIME => Ok(x),
        _ => Err(Seconds::expect()),
    }
);
checked!(
    /// A delay \[s\]: 0 to [`MAX_TIME`].
    Delay(f64), f64, format!("a number of seconds from 0 to {}", short(MAX_TIME)),
    |n| within(n, 0.0, MAX_TIME, "a number of seconds")
);
checked!(
    /// A round or scheduling interval \[s\]: [`MIN_INTERVAL`] to [`MAX_TIME`].
    Interval(f64), f64, format!("a number of seconds from {} to {}", short(MIN_INTERVAL), short(MAX_TIME)),
    |n| within(n, MIN_INTERVAL, MAX_TIME, "a number of seconds")
);
checked!(
    /// A PE speed relative to the reference PE: within [`SPEEDS`].
    Speed(f64), f64, format!("a speed from {} to {}", short(SPEEDS.0), short(SPEEDS.1)),
    |n| within(n, SPEEDS.0, SPEEDS.1, "a speed")
);
checked!(
    /// A price [G$ per PE-second]: 0 to [`MAX_PRICE`].
    Price(f64), f64, format!("a price from 0 to {}", short(MAX_PRICE)),
    |n| within(n, 0.0, MAX_PRICE, "a price")
);

impl Replications {
    /// One: the default.
    pub fn one() -> Replications {
        Replications(1)
    }
}

impl GroupSize {
    /// One: the default size of a group.
    pub fn one() -> GroupSize {
        GroupSize(1)
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

    #[test]
    fn caps_are_named_and_large_numbers_short() {
        #[derive(Debug, Deserialize)]
        struct C {
            n: Option<PositiveInt>,
            g: Option<GroupSize>,
            t: Option<Seconds>,
            i: Option<Interval>,
        }
        let e = |text: &str| toml::from_str::<C>(text).unwrap_err().message().to_string();
        assert_eq!(e("n = 1000000000000"), "expected a positive integer up to 4294967295, found 1000000000000");
        assert_eq!(
            e("g = 100000000"),
            "expected a positive integer up to 100000 (agents per scenario), found 100000000"
        );
        assert_eq!(e("t = 1e300"), "expected a positive number of seconds up to 1e12, found 1e300");
        assert_eq!(e("i = 1e-9"), "expected a number of seconds from 0.001 to 1e12, found 1e-9");
        let ok: C = toml::from_str("n = 4294967295\ng = 100000\nt = 1e12\ni = 0.001").unwrap();
        assert_eq!((ok.n.unwrap().0, ok.g.unwrap().0), (u32::MAX, 100_000));
        assert_eq!((ok.t.unwrap().0, ok.i.unwrap().0), (1e12, 0.001));
    }
}

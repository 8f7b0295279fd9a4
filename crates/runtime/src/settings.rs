//! Node parameters declared once, as a schema: [`settings!`] turns one table of
//! [`Declaration`]s into a typed struct (what the loop reads: fields, no name lookups), its
//! declarations (validation, ranges, `--print-params`, the ROS parameter descriptors, the C
//! ABI's parameter list, the generated reference in the book) and its conversion from a
//! [`ParameterStore`]. Adding a parameter is one line of the table.

use armctl_control::ParameterValue;

use crate::controller_core::SafeMode;
use crate::node_parameters::ParameterStore;

/// A field type a parameter value converts to, once its declaration has validated it.
pub trait FromParameter: Sized {
    /// The value as this type (`None`: another type).
    fn from_parameter(value: &ParameterValue) -> Option<Self>;
}

impl FromParameter for f64 {
    fn from_parameter(value: &ParameterValue) -> Option<Self> {
        match value {
            ParameterValue::Double(v) => Some(*v),
            ParameterValue::Integer(v) => Some(*v as f64),
            _ => None,
        }
    }
}

impl FromParameter for i64 {
    fn from_parameter(value: &ParameterValue) -> Option<Self> {
        match value {
            ParameterValue::Integer(v) => Some(*v),
            _ => None,
        }
    }
}

impl FromParameter for bool {
    fn from_parameter(value: &ParameterValue) -> Option<Self> {
        match value {
            ParameterValue::Bool(v) => Some(*v),
            _ => None,
        }
    }
}

impl FromParameter for String {
    fn from_parameter(value: &ParameterValue) -> Option<Self> {
        match value {
            ParameterValue::String(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl FromParameter for Vec<f64> {
    fn from_parameter(value: &ParameterValue) -> Option<Self> {
        match value {
            ParameterValue::DoubleArray(v) => Some(v.clone()),
            _ => None,
        }
    }
}

/// A list the live settings hold: copying the settings to try a change then copies no numbers
/// (a change handed over on a real-time thread allocates only for its own value).
impl FromParameter for std::sync::Arc<[f64]> {
    fn from_parameter(value: &ParameterValue) -> Option<Self> {
        match value {
            ParameterValue::DoubleArray(v) => Some(v.as_slice().into()),
            _ => None,
        }
    }
}

impl FromParameter for Vec<String> {
    fn from_parameter(value: &ParameterValue) -> Option<Self> {
        match value {
            ParameterValue::StringArray(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl FromParameter for SafeMode {
    fn from_parameter(value: &ParameterValue) -> Option<Self> {
        match value {
            ParameterValue::String(v) => SafeMode::parse(v),
            _ => None,
        }
    }
}

/// The value of `name` in `store` as `T`, else `default` (the declared default) as `T`.
pub fn typed<T: FromParameter + Default>(
    store: &ParameterStore,
    name: &str,
    default: &ParameterValue,
) -> T {
    store
        .get(name)
        .and_then(T::from_parameter)
        .or_else(|| T::from_parameter(default))
        .unwrap_or_default()
}

/// Declares a settings struct from a table of parameters, each
/// `field: Type = constructor("name", default, "description") .modifier(..)*;` with the
/// constructors and modifiers of [`armctl_control::Declaration`]; `#[include] field: Other;`
/// lines first take in another settings struct's parameters (its declarations come first).
#[macro_export]
macro_rules! settings {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(#[include] $inc:ident: $inc_ty:ty;)*
            $(
                $field:ident: $ty:ty = $ctor:ident($pname:literal, $default:expr, $desc:literal $(,)?)
                    $(.$modifier:ident($($marg:expr),*))*;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        $vis struct $name {
            $(
                #[doc = concat!("The parameters of [`", stringify!($inc_ty), "`].")]
                $vis $inc: $inc_ty,
            )*
            $(
                #[doc = concat!("`", $pname, "`: ", $desc)]
                $vis $field: $ty,
            )*
        }

        impl $name {
            /// The declarations, in the table's order.
            $vis fn declarations() -> Vec<armctl_control::Declaration> {
                let own = [$(
                    armctl_control::Declaration::$ctor($pname, $default, $desc)
                        $(.$modifier($($marg),*))*,
                )*];
                let mut out: Vec<armctl_control::Declaration> = Vec::new();
                $(out.extend(<$inc_ty>::declarations());)*
                out.extend(own);
                out
            }

            /// The values `store` holds (the declared default for one it does not hold).
            $vis fn from_store(store: &$crate::node_parameters::ParameterStore) -> Self {
                Self {
                    $($inc: <$inc_ty>::from_store(store),)*
                    $(
                        $field: $crate::settings::typed(
                            store,
                            $pname,
                            &armctl_control::Declaration::$ctor($pname, $default, "").default,
                        ),
                    )*
                }
            }

            /// Sets the field of parameter `name` to `value` (checked by its declaration first):
            /// `Ok(false)` when `name` is none of these settings; refused when `value` is not
            /// of the field's type.
            #[allow(unused_variables)]
            $vis fn set(
                &mut self,
                name: &str,
                value: &armctl_control::ParameterValue,
            ) -> Result<bool, String> {
                $(
                    if self.$inc.set(name, value)? {
                        return Ok(true);
                    }
                )*
                $(
                    if name == $pname {
                        self.$field = $crate::settings::FromParameter::from_parameter(value)
                            .ok_or_else(|| format!("{} is not a {}", value.to_yaml(), stringify!($ty)))?;
                        return Ok(true);
                    }
                )*
                Ok(false)
            }

            /// The fields whose declared default does not convert to the field's type (a
            /// table error that would read as the type's default: a test keeps this empty).
            #[allow(dead_code)]
            $vis fn mistyped() -> Vec<&'static str> {
                #[allow(unused_mut)]
                let mut out: Vec<&'static str> = Vec::new();
                $(out.extend(<$inc_ty>::mistyped());)*
                $(
                    let default = armctl_control::Declaration::$ctor($pname, $default, "").default;
                    if <$ty as $crate::settings::FromParameter>::from_parameter(&default).is_none() {
                        out.push($pname);
                    }
                )*
                out
            }

            /// The declared defaults.
            $vis fn defaults() -> Self {
                Self::from_store(&$crate::node_parameters::ParameterStore::new(vec![]))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use armctl_control::Declaration;

    crate::settings! {
        /// Shared.
        struct Inner {
            path: String = string("path", "", "A path.").read_only();
        }
    }

    crate::settings! {
        /// A node.
        struct Outer {
            #[include] inner: Inner;
            rate: f64 = double("rate", 100.0, "Hz.").range(0.0, 1000.0);
            mode: SafeMode = string("safe_mode", "gravity", "Mode.").choices(&["gravity", "zero"]);
            names: Vec<String> = string_array("names", vec![], "Names.");
            count: i64 = integer("count", 3, "Count.");
        }
    }

    #[test]
    fn one_table_gives_declarations_defaults_and_typed_values() {
        let names: Vec<String> = Outer::declarations().into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["path", "rate", "safe_mode", "names", "count"]);
        let defaults = Outer::defaults();
        assert_eq!(defaults.rate, 100.0);
        assert_eq!(defaults.mode, SafeMode::Gravity);
        assert_eq!(defaults.count, 3);
        assert_eq!(Inner::defaults().path, "");
        let mut store = ParameterStore::new(Outer::declarations());
        store
            .set("safe_mode", &ParameterValue::String("zero".into()), false)
            .unwrap();
        store
            .set("rate", &ParameterValue::Integer(50), false)
            .unwrap();
        store
            .set("path", &ParameterValue::String("a.urdf".into()), true)
            .unwrap();
        let typed = Outer::from_store(&store);
        assert_eq!(typed.mode, SafeMode::Zero);
        assert_eq!(typed.rate, 50.0);
        assert_eq!(typed.inner.path, "a.urdf");
        let mut changed = typed.clone();
        assert_eq!(
            changed.set("path", &ParameterValue::String("b".into())),
            Ok(true)
        );
        assert_eq!(changed.set("count", &ParameterValue::Integer(7)), Ok(true));
        assert_eq!(
            changed.set("unknown", &ParameterValue::Integer(7)),
            Ok(false)
        );
        assert!(changed.set("count", &ParameterValue::Double(7.0)).is_err());
        assert_eq!((changed.inner.path.as_str(), changed.count), ("b", 7));
        let declared = Outer::declarations();
        let rate: &Declaration = &declared[1];
        assert_eq!(rate.range, Some((0.0, 1000.0)));
        assert!(declared[0].read_only);
    }
}

//! Catching a panic inside an embedded engine, keeping its message for the error instead of
//! printing it.
//!
//! redb panics on some damaged files instead of returning an error. The engines catch those
//! panics and answer with a typed error, but the default panic hook would first print the message
//! (and a backtrace hint) on stderr, which a CLI user reads as a crash and a library user gets in
//! the middle of their own output. A hook installed once per process takes the message of a panic
//! raised inside [`catch`] for the error, and hands every other panic to the hook that was there
//! before it, so a program's own panics print as they always did.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::Once;

thread_local! {
    /// How many [`catch`] calls this thread is inside.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The message of the last panic caught on this thread.
    static MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Run `f`; a panic inside it becomes `Err` with the panic's message and location.
pub(crate) fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if DEPTH.with(Cell::get) > 0 {
                MESSAGE.with(|m| *m.borrow_mut() = Some(describe(info)));
            } else {
                previous(info);
            }
        }));
    });
    DEPTH.with(|d| d.set(d.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get() - 1));
    result.map_err(|_| MESSAGE.with(|m| m.borrow_mut().take()).unwrap_or_else(|| "a panic".to_owned()))
}

fn describe(info: &PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic");
    match info.location() {
        Some(at) => format!("{message} (at {}:{})", short(at.file()), at.line()),
        None => message.to_owned(),
    }
}

/// A source path from its crate's folder on (`redb-4.5.0/src/db.rs`), without the build
/// machine's registry path.
fn short(file: &str) -> &str {
    let parts: Vec<&str> = file.split('/').collect();
    match parts.iter().rposition(|p| *p == "src") {
        Some(at) if at >= 1 => {
            let skip: usize = parts[..at - 1].iter().map(|p| p.len() + 1).sum();
            &file[skip..]
        }
        _ => file,
    }
}

#[cfg(test)]
mod tests {
    use super::catch;

    #[test]
    fn a_caught_panic_returns_its_message() {
        let err = catch(|| -> u32 { panic!("page {} is damaged", 7) }).unwrap_err();
        assert!(err.starts_with("page 7 is damaged (at "), "{err}");
        assert_eq!(catch(|| 5), Ok(5));
    }

    #[test]
    fn locations_start_at_the_crate_folder() {
        assert_eq!(super::short("/root/.cargo/registry/src/x/redb-4.5.0/src/db.rs"), "redb-4.5.0/src/db.rs");
        assert_eq!(super::short("src/db.rs"), "src/db.rs");
    }

    #[test]
    fn nested_catches_each_get_their_own_panic() {
        let outer = catch(|| -> u32 {
            let inner = catch(|| -> u32 { panic!("inner") }).unwrap_err();
            assert!(inner.starts_with("inner"));
            panic!("outer")
        });
        assert!(outer.unwrap_err().starts_with("outer"));
    }
}

//! Progress bars appear on a terminal, with the amount done, the rate and the time left, and
//! nowhere else: `zarrdb cat --npy` of a 256 MB region and `zarrdb check` with stderr a
//! pseudo-terminal draw the bar there; with stdout and stderr pipes, stderr stays empty and no
//! escape code reaches either.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::FromRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Command, Stdio};

use zarrdb::{Array, ArrayMetadata, DataType, Database};

/// A pseudo-terminal of 120 × 24: its controlling side and the path of the terminal side.
fn pseudo_terminal() -> (File, String) {
    // SAFETY: plain calls on a descriptor this function owns; each result is checked, the name
    // buffer outlives the call that fills it and is NUL-terminated by it.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let size = libc::winsize { ws_row: 24, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0 };
        assert_eq!(libc::ioctl(master, libc::TIOCSWINSZ, &size), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
        (File::from_raw_fd(master), name)
    }
}

fn database() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.zarrdb");
    let db = Database::create(&path).unwrap();
    // Unwritten chunks read as fill values: 256 MB of output, four 64 MiB slabs, costs no disk.
    Array::create(db.store(), "/big", ArrayMetadata::new(DataType::Float64, vec![4096, 8192], vec![512, 8192]))
        .unwrap();
    (dir, path.display().to_string())
}

/// Run zarrdb with stderr a pseudo-terminal and stdout the file `out`; what the terminal showed.
fn on_a_terminal(args: &[&str], out: File) -> String {
    let (mut master, terminal) = pseudo_terminal();
    let slave = OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOCTTY).open(&terminal).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args).stdout(out).stderr(slave).spawn().unwrap();
    // Read what the terminal shows until the child has exited and its side is closed (Linux then
    // reports EIO, ending the loop).
    let reader = std::thread::spawn(move || {
        let mut shown = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            shown.extend_from_slice(&buf[..n]);
        }
        shown
    });
    let status = child.wait().unwrap();
    // The parent's copy of the terminal side went with the Command; the reader sees the end now.
    let shown = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert!(status.success(), "{args:?}: {shown}");
    shown
}

#[test]
fn a_terminal_gets_a_bar_with_rate_and_time_left() {
    let (dir, db) = database();
    let shown = on_a_terminal(&["cat", &db, "/big", "--npy"], File::create(dir.path().join("big.npy")).unwrap());
    assert!(shown.contains("ETA") && shown.contains("/s") && shown.contains("cat"), "terminal showed {shown:?}");
    assert_eq!(std::fs::metadata(dir.path().join("big.npy")).unwrap().len(), 128 + 4096 * 8192 * 8);
    let shown = on_a_terminal(&["check", &db], File::create(dir.path().join("check.txt")).unwrap());
    assert!(shown.contains("ETA") && shown.contains("check"), "terminal showed {shown:?}");
    // A single step of unknown length: a spinner with the time elapsed.
    let shown = on_a_terminal(&["mv", &db, "/big", "/moved"], File::create(dir.path().join("mv.txt")).unwrap());
    assert!(shown.contains(" mv ") && shown.contains("s "), "terminal showed {shown:?}");
}

#[test]
fn pipes_get_no_bar_and_no_escape_codes() {
    let (_dir, db) = database();
    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["cat", &db, "/big", "--npy"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "stderr: {:?}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout.len(), 128 + 4096 * 8192 * 8);
    // The data is all fill (zeros): any escape code would be the bar's.
    assert!(!out.stdout.contains(&0x1b), "an escape code on stdout");
}

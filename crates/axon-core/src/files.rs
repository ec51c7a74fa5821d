//! The one directory where files a client names live.
//!
//! A tool argument that names a file (`browser_take_screenshot {path}`,
//! `browser_session_save {path}`, `browser_session_new {storage_state_path}`)
//! comes from a client, and through it often from a web page the client read.
//! So it is never a path: it is a plain name inside a directory the operator
//! chose (`[files] dir`). A name is one path component of letters, digits,
//! `.`, `_` and `-`, not starting with a dot: no `/`, no `..`, no hidden
//! files, nothing outside. Writes never go through a symlink (a new file is
//! created exclusively; a replacement is written beside it and renamed over
//! the name, which replaces a link instead of following it), and replace an
//! existing file only when asked. Reads refuse a symlink too. A name the rules
//! refuse is refused before the file system is touched, so a refusal says
//! nothing about what exists outside the directory.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::ToolError;

/// The folder, inside the process owner's, of every tenant's files
/// ([`FileDir::owned_by`]).
pub const TENANTS: &str = ".tenants";

/// The longest name accepted.
pub const MAX_NAME_LEN: usize = 128;

/// A directory that file names in tool arguments resolve inside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileDir {
    root: PathBuf,
}

/// What a write left: the name (as given) and its size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The file's name inside the directory.
    pub name: String,
    /// Bytes written.
    pub bytes: u64,
}

impl FileDir {
    /// Files live under `root` (created, owner-only, on the first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FileDir { root: root.into() }
    }

    /// The files of `owner`: this directory for the process's owner; for a
    /// tenant, a folder of its own under `.tenants/` (a hidden name, which no
    /// tool argument can name), so that one tenant cannot read, overwrite or
    /// squat on another's files, nor the process owner's.
    pub fn owned_by(&self, owner: &crate::Owner) -> FileDir {
        match owner.folder() {
            None => self.clone(),
            Some(folder) => FileDir::new(self.root.join(TENANTS).join(folder)),
        }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The full path of `name`, or `invalid_arguments` at `field` (a JSON
    /// pointer) saying which rule it breaks.
    pub fn resolve(&self, field: &str, name: &str) -> Result<PathBuf, ToolError> {
        check_name(name).map_err(|why| {
            ToolError::invalid_arguments(format!(
                "{field}: {name:?} is not a file name: {why} (files live in the files directory, [files] dir)"
            ))
            .with_code("invalid_file_name")
            .at(field)
        })?;
        Ok(self.root.join(name))
    }

    /// Write `bytes` to `name`. An existing file is an error (code
    /// `file_exists`) unless `overwrite`.
    pub async fn write(
        &self,
        field: &str,
        name: &str,
        bytes: Vec<u8>,
        overwrite: bool,
    ) -> Result<Written, ToolError> {
        let path = self.resolve(field, name)?;
        let root = self.root.clone();
        let field_owned = field.to_string();
        let name_owned = name.to_string();
        let len = bytes.len() as u64;
        tokio::task::spawn_blocking(move || write_file(&root, &path, &bytes, overwrite))
            .await
            .map_err(|e| ToolError::internal(format!("writing a file: {e}")))?
            .map_err(|e| io_error(&field_owned, &name_owned, e))?;
        Ok(Written {
            name: name.to_string(),
            bytes: len,
        })
    }

    /// Read `name`, at most `max_bytes` of it (a larger file is refused).
    pub async fn read(
        &self,
        field: &str,
        name: &str,
        max_bytes: u64,
    ) -> Result<Vec<u8>, ToolError> {
        let path = self.resolve(field, name)?;
        let field_owned = field.to_string();
        let name_owned = name.to_string();
        tokio::task::spawn_blocking(move || read_file(&path, max_bytes))
            .await
            .map_err(|e| ToolError::internal(format!("reading a file: {e}")))?
            .map_err(|e| io_error(&field_owned, &name_owned, e))
    }
}

/// Why `name` is not a plain file name, if it is not.
fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return Err("it is longer than 128 bytes");
    }
    if name.starts_with('.') {
        return Err("it starts with a dot");
    }
    if name.contains(['/', '\\']) {
        return Err("it is a path, not a name");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err("only letters, digits, '.', '_' and '-' are allowed");
    }
    Ok(())
}

fn io_error(field: &str, name: &str, e: std::io::Error) -> ToolError {
    match e.kind() {
        std::io::ErrorKind::AlreadyExists => ToolError::failed(format!(
            "{field}: {name:?} exists in the files directory (pass overwrite: true to replace it)"
        ))
        .with_code("file_exists")
        .at(field),
        std::io::ErrorKind::NotFound => ToolError::invalid_arguments(format!(
            "{field}: no file {name:?} in the files directory"
        ))
        .with_code("file_not_found")
        .at(field),
        std::io::ErrorKind::FileTooLarge => {
            ToolError::invalid_arguments(format!("{field}: {name:?} is too large"))
                .with_code("file_too_large")
                .at(field)
        }
        _ => ToolError::failed(format!("{field}: {name:?}: {e}")).with_code("io"),
    }
}

fn create_root(root: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(root)
}

fn write_file(root: &Path, path: &Path, bytes: &[u8], overwrite: bool) -> std::io::Result<()> {
    create_root(root)?;
    if !overwrite {
        // O_CREAT|O_EXCL: fails on anything already there, a symlink included.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        return file.write_all(bytes).and_then(|()| file.sync_all());
    }
    // Written beside the name, then renamed over it: a symlink (or hard link)
    // at the name is replaced, never written through.
    let temp = root.join(format!(".axon-{}.tmp", ulid::Ulid::new()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

fn read_file(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
    let file = options.open(path).map_err(|e| {
        // ELOOP: the name is a symlink. Said as "not found": what it points
        // at is outside and none of the caller's business.
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return std::io::Error::from(std::io::ErrorKind::NotFound);
        }
        e
    })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
    }
    if meta.len() > max_bytes {
        return Err(std::io::Error::from(std::io::ErrorKind::FileTooLarge));
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, max_bytes + 1), &mut out)?;
    if out.len() as u64 > max_bytes {
        return Err(std::io::Error::from(std::io::ErrorKind::FileTooLarge));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("axon-files-{}", ulid::Ulid::new()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn names_that_are_paths_or_hidden_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "..",
            ".",
            ".bashrc",
            "a/b",
            "a\\b",
            "x\0y",
            "é.png",
            "a b",
            &"x".repeat(129),
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} was accepted");
        }
        for good in ["shot.png", "state-1.json", "a_b.c", &"x".repeat(128)] {
            assert!(check_name(good).is_ok(), "{good:?} was refused");
        }
    }

    #[tokio::test]
    async fn a_refused_name_names_the_field() {
        let dir = FileDir::new(temp_dir());
        let e = dir
            .write("/path", "../../etc/x", b"x".to_vec(), false)
            .await
            .unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::InvalidArguments);
        assert_eq!(e.pointer.as_deref(), Some("/path"));
        assert_eq!(e.code.as_deref(), Some("invalid_file_name"));
        assert!(e.message.starts_with("/path: "), "{}", e.message);
    }

    #[tokio::test]
    async fn an_existing_file_is_replaced_only_when_asked() {
        let root = temp_dir();
        let dir = FileDir::new(&root);
        let w = dir.write("/path", "a.txt", b"one".to_vec(), false).await;
        assert_eq!(w.unwrap().bytes, 3);
        let e = dir
            .write("/path", "a.txt", b"two".to_vec(), false)
            .await
            .unwrap_err();
        assert_eq!(e.code.as_deref(), Some("file_exists"));
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"one");
        dir.write("/path", "a.txt", b"two".to_vec(), true)
            .await
            .unwrap();
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"two");
        assert_eq!(dir.read("/p", "a.txt", 10).await.unwrap(), b"two");
        let e = dir.read("/p", "a.txt", 2).await.unwrap_err();
        assert_eq!(e.code.as_deref(), Some("file_too_large"));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlink_in_the_directory_is_never_followed() {
        let root = temp_dir();
        let outside = temp_dir().join("victim");
        std::fs::write(&outside, b"precious").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link.txt")).unwrap();
        let dir = FileDir::new(&root);
        // Not written through, with or without overwrite.
        let e = dir
            .write("/path", "link.txt", b"evil".to_vec(), false)
            .await
            .unwrap_err();
        assert_eq!(e.code.as_deref(), Some("file_exists"));
        dir.write("/path", "link.txt", b"evil".to_vec(), true)
            .await
            .unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
        assert!(!root.join("link.txt").is_symlink());
        // Not read through either.
        std::fs::remove_file(root.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link.txt")).unwrap();
        let e = dir.read("/p", "link.txt", 100).await.unwrap_err();
        assert_eq!(e.code.as_deref(), Some("file_not_found"));
    }
}

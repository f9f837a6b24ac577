use super::*;
use std::fs;

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

fn code(result: Result<impl std::fmt::Debug>) -> String {
    match result {
        Ok(v) => format!("ok: {v:?}"),
        Err(e) => e.code().as_str().to_string(),
    }
}

#[test]
fn writes_reads_appends_and_removes_below_the_root() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let root = tmp.path();
    let item = root.join("tasks/pm-a.toon");
    write(root, &item, b"one\n")?;
    write(root, &item, b"two\n")?;
    assert_eq!(read(root, &item)?, Some(b"two\n".to_vec()));
    assert_eq!(kind(root, &item)?, EntryKind::File(4));
    let stream = root.join("history/pm-a.jsonl");
    append(root, &stream, b"a\n")?;
    append(root, &stream, b"b\n")?;
    assert_eq!(fs::read(&stream)?, b"a\nb\n");
    assert!(remove(root, &item)?);
    assert!(!remove(root, &item)?);
    assert_eq!(read(root, &item)?, None);
    assert_eq!(read(root, &root.join("missing/x"))?, None);
    assert_eq!(kind(root, &root.join("missing/x"))?, EntryKind::Missing);
    let names: Vec<_> = fs::read_dir(root.join("tasks"))?.collect();
    assert!(names.is_empty(), "no temp file is left behind");
    Ok(())
}

#[test]
fn paths_outside_the_root_are_refused() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().join("t");
    fs::create_dir_all(&root)?;
    assert_eq!(
        code(write(&root, &tmp.path().join("x"), b"x")),
        "path_unsafe"
    );
    assert_eq!(code(write(&root, Path::new("../x"), b"x")), "path_unsafe");
    assert!(!tmp.path().join("x").exists());
    Ok(())
}

#[cfg(unix)]
#[test]
fn no_symlink_below_the_root_is_followed() -> TestResult {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().join("t");
    let decoy = tmp.path().join("decoy");
    fs::create_dir_all(root.join("history"))?;
    fs::create_dir_all(&decoy)?;
    crate::atomic::write(&decoy.join("victim.jsonl"), b"unrelated\n")?;
    // A symlinked folder, and a symlinked file inside a real folder.
    symlink(&decoy, root.join("tasks"))?;
    symlink(decoy.join("victim.jsonl"), root.join("history/pm-a.jsonl"))?;
    symlink(decoy.join("new.jsonl"), root.join("history/pm-b.jsonl"))?;
    let through_folder = root.join("tasks/pm-a.toon");
    let through_file = root.join("history/pm-a.jsonl");
    let dangling = root.join("history/pm-b.jsonl");
    assert_eq!(code(write(&root, &through_folder, b"x")), "path_unsafe");
    assert_eq!(code(read(&root, &through_folder)), "path_unsafe");
    assert_eq!(code(remove(&root, &through_folder)), "path_unsafe");
    assert_eq!(code(append(&root, &through_file, b"x\n")), "path_unsafe");
    assert_eq!(code(append(&root, &dangling, b"x\n")), "path_unsafe");
    assert_eq!(code(read(&root, &through_file)), "path_unsafe");
    assert_eq!(code(write(&root, &through_file, b"x")), "path_unsafe");
    assert_eq!(kind(&root, &through_file)?, EntryKind::Symlink);
    assert_eq!(fs::read(decoy.join("victim.jsonl"))?, b"unrelated\n");
    assert!(!decoy.join("new.jsonl").exists());
    assert!(!decoy.join("pm-a.toon").exists());
    // A symlinked folder deeper down, and one created while a handle is open, are refused too.
    fs::create_dir_all(root.join("schema"))?;
    symlink(&decoy, root.join("schema/nested"))?;
    assert_eq!(
        code(write(&root, &root.join("schema/nested/x.json"), b"x")),
        "path_unsafe"
    );
    assert_eq!(fs::read_dir(&decoy)?.count(), 1, "nothing new in the decoy");
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_symlinked_root_is_the_users_choice() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let real = tmp.path().join("real");
    fs::create_dir_all(&real)?;
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link)?;
    write(&link, &link.join("tasks/pm-a.toon"), b"x")?;
    assert_eq!(fs::read(real.join("tasks/pm-a.toon"))?, b"x");
    Ok(())
}

#[test]
fn a_directory_where_a_file_belongs_is_refused() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let root = tmp.path();
    fs::create_dir_all(root.join("history/pm-a.jsonl"))?;
    let stream = root.join("history/pm-a.jsonl");
    assert_eq!(code(read(root, &stream)), "path_unsafe");
    assert_eq!(code(write(root, &stream, b"x")), "path_unsafe");
    crate::atomic::write(&root.join("tasks"), b"not a folder")?;
    assert_eq!(
        code(write(root, &root.join("tasks/pm-a.toon"), b"x")),
        "path_unsafe"
    );
    Ok(())
}

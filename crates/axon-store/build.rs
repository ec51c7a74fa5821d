//! `sqlx::migrate!` embeds the migration files when this crate compiles; a new
//! or changed migration must make it compile again (as sqlx's docs advise).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}

//! Imported MCP tools' pins (`axon_mcp_client::pin`), one row per tool, the pin as
//! JSON (its shape is axon-mcp-client's; the store keeps it whole). One body serves
//! SQLite and PostgreSQL: the statements use `$n` placeholders, which SQLite
//! numbers in order of first appearance as PostgreSQL does.

use async_trait::async_trait;
use axon_core::StoreError;
use axon_store_roles::PinRows;

use crate::{err, now_ms};

const GET: &str = "SELECT entry FROM tool_pins WHERE tool = $1";
const PUT: &str = "INSERT INTO tool_pins (tool, entry, updated_at_ms) VALUES ($1, $2, $3) \
     ON CONFLICT (tool) DO UPDATE SET entry = $2, updated_at_ms = $3";
const LIST: &str = "SELECT entry FROM tool_pins ORDER BY tool";

macro_rules! pins_in {
    ($store:ty) => {
        #[async_trait]
        impl PinRows for $store {
            async fn pin_get(&self, tool: &str) -> Result<Option<String>, StoreError> {
                sqlx::query_scalar(GET)
                    .bind(tool)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(err)
            }

            async fn pin_put(&self, tool: &str, entry: &str) -> Result<(), StoreError> {
                sqlx::query(PUT)
                    .bind(tool)
                    .bind(entry)
                    .bind(now_ms())
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err(err)
            }

            async fn pin_list(&self) -> Result<Vec<String>, StoreError> {
                sqlx::query_scalar(LIST)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(err)
            }
        }
    };
}

pins_in!(crate::SqliteStore);
pins_in!(crate::PgStore);

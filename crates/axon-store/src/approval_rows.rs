//! Calls parked for approval (`axon_core::approval`) in the store, so that a
//! decision made by any process on it — `axon approvals approve` in a
//! terminal, another replica's API — reaches the call wherever it waits (it
//! polls every [`POLL`]). One body serves SQLite and PostgreSQL: the
//! statements use `$n` placeholders, which SQLite numbers in order of first
//! appearance as PostgreSQL does.

use async_trait::async_trait;
use axon_core::StoreError;
use axon_core::approval::{
    ApprovalError, ApprovalRecord, ApprovalStatus, ApprovalStore, Decision, POLL,
};

use crate::{err, now_ms};

/// A plan step asked again replaces its decided approval.
const OPEN: &str = "INSERT INTO approvals (id, status, tenant, entry, created_at_ms) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (id) DO UPDATE SET status = $2, tenant = $3, entry = $4, created_at_ms = $5";
const GET: &str = "SELECT entry FROM approvals WHERE id = $1";
/// A decision (or the deadline) applies to a pending approval only: the
/// first one written stands.
const SETTLE: &str =
    "UPDATE approvals SET status = $2, entry = $3 WHERE id = $1 AND status = 'pending'";
/// An approval is spent once: the first call let run under it turns its
/// status column to `spent` (the record's own status stays `approved`, with
/// `spent_at_ms`); every later one finds no approved row.
const SPEND: &str =
    "UPDATE approvals SET status = 'spent', entry = $2 WHERE id = $1 AND status = 'approved'";
const LIST: &str = "SELECT entry FROM approvals WHERE ($1 = 0 OR status = 'pending') \
     ORDER BY created_at_ms DESC, id DESC LIMIT $2";

fn to_json(record: &ApprovalRecord) -> Result<String, StoreError> {
    serde_json::to_string(record).map_err(err)
}

fn from_json(json: &str) -> Result<ApprovalRecord, StoreError> {
    serde_json::from_str(json)
        .map_err(|e| StoreError::corrupt(format!("an approval does not read: {e}"), e))
}

macro_rules! approvals_in {
    ($store:ty) => {
        #[async_trait]
        impl ApprovalStore for $store {
            async fn open(&self, record: &ApprovalRecord) -> Result<(), StoreError> {
                sqlx::query(OPEN)
                    .bind(&record.id)
                    .bind(record.status.as_str())
                    .bind(record.owner.tenant())
                    .bind(to_json(record)?)
                    .bind(record.requested_at_ms as i64)
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err(err)
            }

            async fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
                let json: Option<String> = sqlx::query_scalar(GET)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(err)?;
                json.as_deref().map(from_json).transpose()
            }

            async fn decide(
                &self,
                id: &str,
                decision: &Decision,
            ) -> Result<ApprovalRecord, ApprovalError> {
                let record = ApprovalStore::get(self, id)
                    .await?
                    .ok_or_else(|| ApprovalError::NotFound(id.to_string()))?;
                let decided = record.decided(decision, now_ms() as u64)?;
                let written = sqlx::query(SETTLE)
                    .bind(id)
                    .bind(decided.status.as_str())
                    .bind(to_json(&decided)?)
                    .execute(&self.pool)
                    .await
                    .map_err(err)?;
                if written.rows_affected() == 0 {
                    // Decided (or expired) by someone else meanwhile.
                    let now = ApprovalStore::get(self, id).await?;
                    return Err(ApprovalError::Decided {
                        id: id.to_string(),
                        status: now.map_or(ApprovalStatus::Expired, |r| r.status),
                    });
                }
                Ok(decided)
            }

            async fn expire(&self, id: &str) -> Result<bool, StoreError> {
                let Some(mut record) = ApprovalStore::get(self, id).await? else {
                    return Ok(false);
                };
                if record.status != ApprovalStatus::Pending {
                    return Ok(false);
                }
                record.status = ApprovalStatus::Expired;
                let written = sqlx::query(SETTLE)
                    .bind(id)
                    .bind(record.status.as_str())
                    .bind(to_json(&record)?)
                    .execute(&self.pool)
                    .await
                    .map_err(err)?;
                Ok(written.rows_affected() > 0)
            }

            async fn spend(&self, id: &str) -> Result<bool, StoreError> {
                let Some(mut record) = ApprovalStore::get(self, id).await? else {
                    return Ok(false);
                };
                if record.status != ApprovalStatus::Approved || record.spent_at_ms.is_some() {
                    return Ok(false);
                }
                record.spent_at_ms = Some(now_ms() as u64);
                let written = sqlx::query(SPEND)
                    .bind(id)
                    .bind(to_json(&record)?)
                    .execute(&self.pool)
                    .await
                    .map_err(err)?;
                Ok(written.rows_affected() > 0)
            }

            async fn list(
                &self,
                pending_only: bool,
                limit: u32,
            ) -> Result<Vec<ApprovalRecord>, StoreError> {
                let rows: Vec<String> = sqlx::query_scalar(LIST)
                    .bind(i64::from(pending_only))
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(err)?;
                rows.iter().map(|json| from_json(json)).collect()
            }

            async fn changed(&self, _id: &str) {
                tokio::time::sleep(POLL).await;
            }
        }
    };
}

approvals_in!(crate::SqliteStore);
approvals_in!(crate::PgStore);

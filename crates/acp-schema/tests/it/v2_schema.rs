//! Protocol v2 (feature `v2`): the types of `acp_schema::v2` against the v2
//! schema of `@agentclientprotocol/sdk` 2.4.0 (`latest/v2-sdk-2.4.0/` of the
//! official schema directory; see `common/official.rs`).
//!
//! The same guarantees as v1's `schema_validation.rs` and `method_tables.rs`,
//! on the corpus `tests/corpus/v2/*.json` (same entry format, plus
//! `"unstable": true` for an example that needs `schema.unstable.json`):
//! - every example decodes into the Rust counterpart of its `def` and encodes
//!   back byte for byte (or to its `expect`), and both sides validate against
//!   the v2 schema (an unstable example against the unstable one, typed with
//!   feature `v2-unstable`; without it, what the types do not know is kept, so
//!   the output is the same JSON);
//! - coverage: every definition, union alternative (the `_`-prefixed custom
//!   ones included), `const` value and property occurs in an example, `_meta`
//!   with nested content; `null` for a nullable optional property reads as
//!   absent except where it is a patch that clears;
//! - the v2 method tables match the schema's `x-method`/`x-side`;
//! - the v1 types that v2 reuses are the same on the wire (module `reuse`).

use crate::common;

use acp_schema::v2;
use acp_schema::{DecodeError, MethodEnum, MethodInfo, MethodKind, Side};
use common::{Failure, Json, alt_label, alternatives, alternatives_at, is_null_schema};
use common::{ordered_text, roundtrip_as};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::OnceLock;

// ---------------------------------------------------------------------------
// The v2 schemas

/// `schema.json` (stable) or `schema.unstable.json` of the v2 folder.
fn schema(unstable: bool) -> &'static Value {
    static CELLS: [OnceLock<Value>; 2] = [OnceLock::new(), OnceLock::new()];
    CELLS[unstable as usize].get_or_init(|| {
        let file = if unstable {
            "schema.unstable.json"
        } else {
            "schema.json"
        };
        let path = common::schema_dir().join("latest/v2-sdk-2.4.0").join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        serde_json::from_str(&text).expect("the v2 schema is JSON")
    })
}

fn defs(unstable: bool) -> &'static Map<String, Value> {
    schema(unstable)["$defs"].as_object().expect("`$defs`")
}

/// The validators of every subschema of the v2 schema, compiled once.
fn validators(unstable: bool) -> &'static jsonschema::ValidatorMap {
    static CELLS: [OnceLock<jsonschema::ValidatorMap>; 2] = [OnceLock::new(), OnceLock::new()];
    CELLS[unstable as usize].get_or_init(|| {
        let mut root = Map::new();
        root.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        root.insert("$defs".into(), Value::Object(defs(unstable).clone()));
        jsonschema::validator_map_for(&Value::Object(root)).expect("the v2 schema compiles")
    })
}

fn validator(unstable: bool, pointer: &str) -> Option<&'static jsonschema::Validator> {
    validators(unstable).get(&format!("#{pointer}"))
}

fn is_valid(unstable: bool, def: &str, value: &Value) -> Option<bool> {
    validator(unstable, &format!("/$defs/{def}")).map(|v| v.is_valid(value))
}

fn errors(unstable: bool, def: &str, value: &Value) -> Vec<String> {
    match validator(unstable, &format!("/$defs/{def}")) {
        None => vec![format!("no def {def}")],
        Some(v) => v
            .iter_errors(value)
            .map(|e| format!("{} at `{}`", e, e.instance_path()))
            .take(5)
            .collect(),
    }
}

// ---------------------------------------------------------------------------
// The corpus

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lenient {
    No,
    Fallback,
}

#[derive(Debug, Clone)]
struct Example {
    file: String,
    def: String,
    name: String,
    method: Option<String>,
    unstable: bool,
    lenient: Lenient,
    value: Value,
    expect: Option<Value>,
    ordered: Json,
    ordered_expect: Option<Json>,
}

impl Example {
    fn id(&self) -> String {
        format!("{}/{} ({})", self.def, self.name, self.file)
    }

    fn input_text(&self) -> String {
        ordered_text(&self.ordered)
    }

    fn expected_text(&self) -> String {
        ordered_text(self.ordered_expect.as_ref().unwrap_or(&self.ordered))
    }

    /// Whether this build types everything in it.
    fn typed(&self) -> bool {
        !self.unstable || cfg!(feature = "v2-unstable")
    }
}

fn corpus() -> &'static [Example] {
    static C: OnceLock<Vec<Example>> = OnceLock::new();
    C.get_or_init(load_corpus)
}

fn load_corpus() -> Vec<Example> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/v2");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let source = std::fs::read_to_string(&path).unwrap();
        let entries: Vec<BTreeMap<String, Box<RawValue>>> = serde_json::from_str(&source)
            .unwrap_or_else(|e| panic!("{file}: an array of objects: {e}"));
        for (i, entry) in entries.into_iter().enumerate() {
            let ordered = |key: &str| -> Option<Json> {
                entry
                    .get(key)
                    .map(|raw| serde_json::from_str(raw.get()).expect("JSON"))
            };
            let plain = |key: &str| -> Option<Value> {
                entry
                    .get(key)
                    .map(|raw| serde_json::from_str(raw.get()).expect("JSON"))
            };
            let text = |key: &str| -> Option<String> {
                plain(key).map(|v| match v {
                    Value::String(s) => s,
                    other => panic!("{file}[{i}].{key}: a string, not {other}"),
                })
            };
            for key in entry.keys() {
                assert!(
                    [
                        "def", "name", "method", "unstable", "lenient", "value", "expect", "note"
                    ]
                    .contains(&key.as_str()),
                    "{file}[{i}]: unknown key {key}"
                );
            }
            out.push(Example {
                file: file.clone(),
                def: text("def").unwrap_or_else(|| panic!("{file}[{i}]: no def")),
                name: text("name").unwrap_or_else(|| panic!("{file}[{i}]: no name")),
                method: text("method"),
                unstable: plain("unstable") == Some(Value::Bool(true)),
                lenient: match plain("lenient") {
                    None | Some(Value::Bool(false)) => Lenient::No,
                    Some(Value::Bool(true)) => Lenient::Fallback,
                    Some(other) => panic!("{file}[{i}]: bad lenient {other}"),
                },
                value: plain("value").unwrap_or_else(|| panic!("{file}[{i}]: no value")),
                expect: plain("expect"),
                ordered: ordered("value").unwrap(),
                ordered_expect: ordered("expect"),
            });
        }
    }
    out
}

fn examples_of(def: &str) -> impl Iterator<Item = &'static Example> + '_ {
    corpus().iter().filter(move |ex| ex.def == def)
}

/// Collects failures and fails once, listing them all.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn push(&mut self, msg: impl Into<String>) {
        self.0.push(msg.into());
    }

    fn finish(self, what: &str) {
        if !self.0.is_empty() {
            panic!("{} {what}:\n  - {}", self.0.len(), self.0.join("\n  - "));
        }
    }
}

// ---------------------------------------------------------------------------
// Registry: definition name → Rust type

fn roundtrip_request<R: MethodEnum + PartialEq + std::fmt::Debug>(
    json: &str,
) -> Result<String, Failure> {
    roundtrip_as::<acp_schema::RequestMessage<R>>(json)
}

fn roundtrip_notification<R: MethodEnum + PartialEq + std::fmt::Debug>(
    json: &str,
) -> Result<String, Failure> {
    roundtrip_as::<acp_schema::NotificationMessage<R>>(json)
}

fn roundtrip_response<R>(method: Option<&str>, json: &str) -> Result<String, Failure>
where
    R: acp_schema::ResultEnum + PartialEq + std::fmt::Debug,
{
    let method = method.ok_or_else(|| Failure::Unstable("a response needs `method`".into()))?;
    let value = acp_schema::ResponseMessage::<R>::decode(method, json)?;
    let out = serde_json::to_string(&value).map_err(|e| Failure::Unstable(e.to_string()))?;
    let again = acp_schema::ResponseMessage::<R>::decode(method, &out)
        .map_err(|e| Failure::Unstable(format!("re-encoded output {out} does not decode: {e}")))?;
    if again != value {
        return Err(Failure::Unstable(format!("{value:?} vs {again:?}")));
    }
    Ok(out)
}

macro_rules! registry {
    (
        stable { $($name:literal => $ty:ty),* $(,)? }
        unstable { $($uname:literal => $uty:ty),* $(,)? }
    ) => {
        /// Every definition with a Rust counterpart in this build.
        fn counterparts() -> Vec<&'static str> {
            #[allow(unused_mut)]
            let mut names = vec![$($name),*];
            #[cfg(feature = "v2-unstable")]
            names.extend([$($uname),*]);
            names
        }

        fn roundtrip_plain(def: &str, json: &str) -> Option<Result<String, Failure>> {
            match def {
                $($name => Some(roundtrip_as::<$ty>(json)),)*
                $(
                    #[cfg(feature = "v2-unstable")]
                    $uname => Some(roundtrip_as::<$uty>(json)),
                )*
                _ => None,
            }
        }
    };
}

/// Decodes `json` as the Rust counterpart of `def` and encodes it again.
fn roundtrip(def: &str, method: Option<&str>, json: &str) -> Option<Result<String, Failure>> {
    Some(match def {
        "ClientRequest" => roundtrip_request::<v2::ClientRequest>(json),
        "AgentRequest" => roundtrip_request::<v2::AgentRequest>(json),
        "ClientNotification" => roundtrip_notification::<v2::ClientNotification>(json),
        "AgentNotification" => roundtrip_notification::<v2::AgentNotification>(json),
        "AgentResponse" => roundtrip_response::<v2::AgentResponse>(method, json),
        "ClientResponse" => roundtrip_response::<v2::ClientResponse>(method, json),
        "ExtRequest" | "ExtNotification" | "ExtResponse" | "ErrorData" => {
            acp_schema::decode::<acp_schema::RawJson>(json)
                .map(|r| r.get().to_string())
                .map_err(Failure::Decode)
        }
        _ => return roundtrip_plain(def, json),
    })
}

/// Definitions kept raw by design (like v1's proxy chains).
const UNTYPED: &[&str] = &[
    "ProxyRequest",
    "ProxyResponse",
    "ProxyNotification",
    "InitializeProxyRequest",
    "InitializeProxyResponse",
    "ProxySuccessorRequest",
    "ProxySuccessorResponse",
    "ProxySuccessorNotification",
];

fn has_counterpart(def: &str) -> bool {
    counterparts().contains(&def)
        || [
            "ClientRequest",
            "AgentRequest",
            "ClientNotification",
            "AgentNotification",
            "AgentResponse",
            "ClientResponse",
            "ExtRequest",
            "ExtNotification",
            "ExtResponse",
            "ErrorData",
        ]
        .contains(&def)
}

registry! {
    stable {
        "RequestId" => v2::RequestId,
        "SessionId" => v2::SessionId,
        "RequestPermissionRequest" => v2::RequestPermissionRequest,
        "RequestPermissionSubject" => v2::RequestPermissionSubject,
        "ToolCallUpdate" => v2::ToolCallUpdate,
        "ToolCallId" => v2::ToolCallId,
        "ToolKind" => v2::ToolKind,
        "ToolCallStatus" => v2::ToolCallStatus,
        "ToolCallContent" => v2::ToolCallContent,
        "ContentBlock" => v2::ContentBlock,
        "Annotations" => v2::Annotations,
        "Role" => v2::Role,
        "TextContent" => v2::TextContent,
        "MediaType" => v2::MediaType,
        "ImageContent" => v2::ImageContent,
        "AudioContent" => v2::AudioContent,
        "Icon" => v2::Icon,
        "IconTheme" => v2::IconTheme,
        "ResourceLink" => v2::ResourceLink,
        "EmbeddedResourceResource" => v2::EmbeddedResourceResource,
        "TextResourceContents" => v2::TextResourceContents,
        "BlobResourceContents" => v2::BlobResourceContents,
        "EmbeddedResource" => v2::EmbeddedResource,
        "Content" => v2::Content,
        "DiffChange" => v2::DiffChange,
        "DiffFileType" => v2::DiffFileType,
        "AbsolutePath" => v2::AbsolutePath,
        "DiffPathChange" => v2::DiffPathChange,
        "DiffPathPairChange" => v2::DiffPathPairChange,
        "DiffPatch" => v2::DiffPatch,
        "DiffPatchFormat" => v2::DiffPatchFormat,
        "Diff" => v2::Diff,
        "TerminalId" => v2::TerminalId,
        "Terminal" => v2::Terminal,
        "ToolCallLocation" => v2::ToolCallLocation,
        "ToolCallCapabilities" => v2::ToolCallCapabilities,
        "ToolCallCancelCapabilities" => v2::ToolCallCancelCapabilities,
        "ToolCallPermissionSubject" => v2::ToolCallPermissionSubject,
        "CommandPermissionSubject" => v2::CommandPermissionSubject,
        "PermissionOption" => v2::PermissionOption,
        "PermissionOptionId" => v2::PermissionOptionId,
        "PermissionOptionKind" => v2::PermissionOptionKind,
        "CreateElicitationRequest" => v2::CreateElicitationRequest,
        "ElicitationSessionScope" => v2::ElicitationSessionScope,
        "ElicitationRequestScope" => v2::ElicitationRequestScope,
        "ElicitationSchema" => v2::ElicitationSchema,
        "ElicitationSchemaType" => v2::ElicitationSchemaType,
        "ElicitationPropertySchema" => v2::ElicitationPropertySchema,
        "StringFormat" => v2::StringFormat,
        "EnumOption" => v2::EnumOption,
        "StringPropertySchema" => v2::StringPropertySchema,
        "NumberPropertySchema" => v2::NumberPropertySchema,
        "IntegerPropertySchema" => v2::IntegerPropertySchema,
        "BooleanPropertySchema" => v2::BooleanPropertySchema,
        "MultiSelectItems" => v2::MultiSelectItems,
        "StringMultiSelectItems" => v2::StringMultiSelectItems,
        "TitledMultiSelectItems" => v2::TitledMultiSelectItems,
        "MultiSelectPropertySchema" => v2::MultiSelectPropertySchema,
        "ElicitationFormMode" => v2::ElicitationFormMode,
        "ElicitationId" => v2::ElicitationId,
        "ElicitationUrlMode" => v2::ElicitationUrlMode,
        "InitializeResponse" => v2::InitializeResponse,
        "ProtocolVersion" => v2::ProtocolVersion,
        "Implementation" => v2::Implementation,
        "AgentCapabilities" => v2::AgentCapabilities,
        "SessionCapabilities" => v2::SessionCapabilities,
        "PromptCapabilities" => v2::PromptCapabilities,
        "PromptImageCapabilities" => v2::PromptImageCapabilities,
        "PromptAudioCapabilities" => v2::PromptAudioCapabilities,
        "PromptEmbeddedContextCapabilities" => v2::PromptEmbeddedContextCapabilities,
        "McpCapabilities" => v2::McpCapabilities,
        "McpStdioCapabilities" => v2::McpStdioCapabilities,
        "McpHttpCapabilities" => v2::McpHttpCapabilities,
        "SessionDeleteCapabilities" => v2::SessionDeleteCapabilities,
        "SessionAdditionalDirectoriesCapabilities" => v2::SessionAdditionalDirectoriesCapabilities,
        "AgentAuthCapabilities" => v2::AgentAuthCapabilities,
        "AuthMethod" => v2::AuthMethod,
        "AuthMethodId" => v2::AuthMethodId,
        "EnvVariable" => v2::EnvVariable,
        "AuthMethodTerminal" => v2::AuthMethodTerminal,
        "AuthMethodAgent" => v2::AuthMethodAgent,
        "LoginAuthResponse" => v2::LoginAuthResponse,
        "LogoutAuthResponse" => v2::LogoutAuthResponse,
        "NewSessionResponse" => v2::NewSessionResponse,
        "SessionConfigOption" => v2::SessionConfigOption,
        "SessionConfigId" => v2::SessionConfigId,
        "SessionConfigOptionCategory" => v2::SessionConfigOptionCategory,
        "SessionConfigValueId" => v2::SessionConfigValueId,
        "SessionConfigSelectOptions" => v2::SessionConfigSelectOptions,
        "SessionConfigSelectOption" => v2::SessionConfigSelectOption,
        "SessionConfigSelectGroup" => v2::SessionConfigSelectGroup,
        "SessionConfigGroupId" => v2::SessionConfigGroupId,
        "SessionConfigSelect" => v2::SessionConfigSelect,
        "SessionConfigBoolean" => v2::SessionConfigBoolean,
        "AvailableCommand" => v2::AvailableCommand,
        "AvailableCommandInput" => v2::AvailableCommandInput,
        "TextCommandInput" => v2::TextCommandInput,
        "Command" => v2::Command,
        "ListSessionsResponse" => v2::ListSessionsResponse,
        "SessionInfo" => v2::SessionInfo,
        "SessionListCursor" => v2::SessionListCursor,
        "DeleteSessionResponse" => v2::DeleteSessionResponse,
        "ResumeSessionResponse" => v2::ResumeSessionResponse,
        "CloseSessionResponse" => v2::CloseSessionResponse,
        "CancelToolCallResponse" => v2::CancelToolCallResponse,
        "CancelTerminalResponse" => v2::CancelTerminalResponse,
        "SetSessionConfigOptionResponse" => v2::SetSessionConfigOptionResponse,
        "PromptResponse" => v2::PromptResponse,
        "MessageId" => v2::MessageId,
        "Error" => v2::Error,
        "ErrorCode" => v2::ErrorCode,
        "UnsupportedProtocolVersionErrorData" => v2::UnsupportedProtocolVersionErrorData,
        "SessionNotFoundErrorData" => v2::SessionNotFoundErrorData,
        "UpdateSessionNotification" => v2::UpdateSessionNotification,
        "SessionUpdate" => v2::SessionUpdate,
        "ContentChunk" => v2::ContentChunk,
        "UserMessage" => v2::UserMessage,
        "AgentMessage" => v2::AgentMessage,
        "AgentThought" => v2::AgentThought,
        "BackgroundWork" => v2::BackgroundWork,
        "BackgroundTerminal" => v2::BackgroundTerminal,
        "BackgroundToolCall" => v2::BackgroundToolCall,
        "RunningStateUpdate" => v2::RunningStateUpdate,
        "ErrorStopReason" => v2::ErrorStopReason,
        "IdleStateUpdate" => v2::IdleStateUpdate,
        "RequiresActionStateUpdate" => v2::RequiresActionStateUpdate,
        "StateUpdate" => v2::StateUpdate,
        "ToolCallContentChunk" => v2::ToolCallContentChunk,
        "TerminalOutput" => v2::TerminalOutput,
        "TerminalExitStatus" => v2::TerminalExitStatus,
        "TerminalSize" => v2::TerminalSize,
        "TerminalCapabilities" => v2::TerminalCapabilities,
        "TerminalCancelCapabilities" => v2::TerminalCancelCapabilities,
        "TerminalUpdate" => v2::TerminalUpdate,
        "TerminalOutputChunk" => v2::TerminalOutputChunk,
        "PlanUpdateContent" => v2::PlanUpdateContent,
        "PlanId" => v2::PlanId,
        "PlanEntry" => v2::PlanEntry,
        "PlanEntryPriority" => v2::PlanEntryPriority,
        "PlanEntryStatus" => v2::PlanEntryStatus,
        "PlanItems" => v2::PlanItems,
        "PlanUpdate" => v2::PlanUpdate,
        "AvailableCommandsUpdate" => v2::AvailableCommandsUpdate,
        "ConfigOptionUpdate" => v2::ConfigOptionUpdate,
        "SessionInfoUpdate" => v2::SessionInfoUpdate,
        "Cost" => v2::Cost,
        "UsageUpdate" => v2::UsageUpdate,
        "NoticeSeverity" => v2::NoticeSeverity,
        "Notice" => v2::Notice,
        "CompactionId" => v2::CompactionId,
        "CompactionStatus" => v2::CompactionStatus,
        "CompactionUpdate" => v2::CompactionUpdate,
        "CompactionSummaryChunk" => v2::CompactionSummaryChunk,
        "CompleteElicitationNotification" => v2::CompleteElicitationNotification,
        "InitializeRequest" => v2::InitializeRequest,
        "ClientCapabilities" => v2::ClientCapabilities,
        "ClientAuthCapabilities" => v2::ClientAuthCapabilities,
        "TerminalAuthCapabilities" => v2::TerminalAuthCapabilities,
        "ElicitationCapabilities" => v2::ElicitationCapabilities,
        "ElicitationFormCapabilities" => v2::ElicitationFormCapabilities,
        "ElicitationUrlCapabilities" => v2::ElicitationUrlCapabilities,
        "LoginAuthRequest" => v2::LoginAuthRequest,
        "LogoutAuthRequest" => v2::LogoutAuthRequest,
        "NewSessionRequest" => v2::NewSessionRequest,
        "McpServer" => v2::McpServer,
        "HttpHeader" => v2::HttpHeader,
        "McpServerHttp" => v2::McpServerHttp,
        "McpServerStdio" => v2::McpServerStdio,
        "ListSessionsRequest" => v2::ListSessionsRequest,
        "DeleteSessionRequest" => v2::DeleteSessionRequest,
        "ResumeSessionRequest" => v2::ResumeSessionRequest,
        "ReplayFrom" => v2::ReplayFrom,
        "ReplayFromStart" => v2::ReplayFromStart,
        "CloseSessionRequest" => v2::CloseSessionRequest,
        "CancelToolCallRequest" => v2::CancelToolCallRequest,
        "CancelTerminalRequest" => v2::CancelTerminalRequest,
        "SetSessionConfigOptionRequest" => v2::SetSessionConfigOptionRequest,
        "PromptRequest" => v2::PromptRequest,
        "RequestPermissionResponse" => v2::RequestPermissionResponse,
        "RequestPermissionOutcome" => v2::RequestPermissionOutcome,
        "CancelledPermissionOutcome" => v2::CancelledPermissionOutcome,
        "SelectedPermissionOutcome" => v2::SelectedPermissionOutcome,
        "CreateElicitationResponse" => v2::CreateElicitationResponse,
        "ElicitationContentValue" => v2::ElicitationContentValue,
        "ElicitationAcceptAction" => v2::ElicitationAcceptAction,
        "CancelSessionNotification" => v2::CancelSessionNotification,
        "CancelRequestNotification" => acp_schema::CancelRequestNotification,
    }
    unstable {
        "MessageMcpRequest" => v2::MessageMcpRequest,
        "McpServerAcpId" => v2::McpServerAcpId,
        "McpRequestId" => v2::McpRequestId,
        "McpAcpCapabilities" => v2::McpAcpCapabilities,
        "SessionSystemPromptCapabilities" => v2::SessionSystemPromptCapabilities,
        "SessionSystemPromptModeCapabilities" => v2::SessionSystemPromptModeCapabilities,
        "SessionSystemPromptOverrideCapabilities" => v2::SessionSystemPromptOverrideCapabilities,
        "SessionForkCapabilities" => v2::SessionForkCapabilities,
        "SessionArchiveCapabilities" => v2::SessionArchiveCapabilities,
        "SessionStatusCapabilities" => v2::SessionStatusCapabilities,
        "SessionTitleCapabilities" => v2::SessionTitleCapabilities,
        "AuthStatusCapabilities" => v2::AuthStatusCapabilities,
        "ProvidersCapabilities" => v2::ProvidersCapabilities,
        "ListProvidersResponse" => v2::ListProvidersResponse,
        "ProviderInfo" => v2::ProviderInfo,
        "ProviderId" => v2::ProviderId,
        "LlmProtocol" => v2::LlmProtocol,
        "ProviderCurrentConfig" => v2::ProviderCurrentConfig,
        "SetProviderResponse" => v2::SetProviderResponse,
        "DisableProviderResponse" => v2::DisableProviderResponse,
        "AuthStatusResponse" => v2::AuthStatusResponse,
        "AuthState" => v2::AuthState,
        "AuthAccount" => v2::AuthAccount,
        "ForkSessionResponse" => v2::ForkSessionResponse,
        "ArchiveSessionResponse" => v2::ArchiveSessionResponse,
        "UnarchiveSessionResponse" => v2::UnarchiveSessionResponse,
        "SessionStatusResponse" => v2::SessionStatusResponse,
        "SessionStatus" => v2::SessionStatus,
        "BackgroundSubagent" => v2::BackgroundSubagent,
        "Usage" => v2::Usage,
        "UnknownStateUpdate" => v2::UnknownStateUpdate,
        "SetSessionTitleResponse" => v2::SetSessionTitleResponse,
        "PlanFile" => v2::PlanFile,
        "PlanMarkdown" => v2::PlanMarkdown,
        "PlanRemoved" => v2::PlanRemoved,
        "SubagentSessionCapabilities" => v2::SubagentSessionCapabilities,
        "SessionCancelCapabilities" => v2::SessionCancelCapabilities,
        "SubagentUpdate" => v2::SubagentUpdate,
        "SessionMessage" => v2::SessionMessage,
        "SessionMessageChunk" => v2::SessionMessageChunk,
        "AuthStatusUpdateNotification" => v2::AuthStatusUpdateNotification,
        "ListProvidersRequest" => v2::ListProvidersRequest,
        "SetProviderRequest" => v2::SetProviderRequest,
        "DisableProviderRequest" => v2::DisableProviderRequest,
        "AuthStatusRequest" => v2::AuthStatusRequest,
        "McpServerAcp" => v2::McpServerAcp,
        "SystemPrompt" => v2::SystemPrompt,
        "SystemPromptMode" => v2::SystemPromptMode,
        "SessionArchiveFilter" => v2::SessionArchiveFilter,
        "ForkSessionRequest" => v2::ForkSessionRequest,
        "ArchiveSessionRequest" => v2::ArchiveSessionRequest,
        "UnarchiveSessionRequest" => v2::UnarchiveSessionRequest,
        "SessionStatusRequest" => v2::SessionStatusRequest,
        "SetSessionTitleRequest" => v2::SetSessionTitleRequest,
        "MessageMcpResponse" => v2::MessageMcpResponse,
        "McpError" => v2::McpError,
        "MessageMcpNotification" => v2::MessageMcpNotification,
    }
}

// ---------------------------------------------------------------------------
// The corpus against the types and the schema

#[test]
fn corpus_is_well_formed() {
    let mut failures = Failures::default();
    let mut seen = BTreeSet::new();
    for ex in corpus() {
        if !seen.insert((ex.def.clone(), ex.name.clone())) {
            failures.push(format!("{}: duplicate name", ex.id()));
        }
        let in_stable = defs(false).contains_key(&ex.def);
        if !in_stable && !defs(true).contains_key(&ex.def) {
            failures.push(format!("{}: no such v2 definition", ex.id()));
        }
        if !in_stable && !ex.unstable {
            failures.push(format!("{}: an unstable definition; mark it", ex.id()));
        }
        if ex.ordered_expect.as_ref().map(ordered_text) == Some(ex.input_text()) {
            failures.push(format!("{}: `expect` equals `value`; drop it", ex.id()));
        }
        let is_response = ex.def == "AgentResponse" || ex.def == "ClientResponse";
        if is_response != ex.method.is_some() {
            failures.push(format!("{}: `method` is for responses only", ex.id()));
        }
    }
    assert!(corpus().len() > 400, "the v2 corpus looks truncated");
    failures.finish("malformed v2 corpus entries");
}

#[test]
fn examples_round_trip_exactly_and_validate() {
    let mut failures = Failures::default();
    let mut typed = 0;
    for ex in corpus() {
        let input = ex.input_text();
        let Some(result) = roundtrip(&ex.def, ex.method.as_deref(), &input) else {
            if ex.typed() {
                failures.push(format!("{}: no Rust counterpart", ex.id()));
            }
            continue;
        };
        let out = match result {
            Ok(out) => out,
            // Without `v2-unstable`, only the unstable methods are unknown.
            Err(Failure::Decode(e)) if !ex.typed() && e.message.contains("unknown method") => {
                continue;
            }
            Err(e) => {
                failures.push(format!(
                    "{}: decode failed: {e}\n      input: {input}",
                    ex.id()
                ));
                continue;
            }
        };
        let output: Value = serde_json::from_str(&out).expect("JSON");
        if ex.typed() {
            typed += 1;
            let expected = ex.expected_text();
            if out != expected {
                failures.push(format!(
                    "{}: output differs\n      input:    {input}\n      expected: {expected}\n      output:   {out}",
                    ex.id()
                ));
            }
        } else {
            // Without the feature, what the types do not know is kept: the
            // same JSON, maybe in another member order.
            let expected = ex.expect.as_ref().unwrap_or(&ex.value);
            if &output != expected {
                failures.push(format!(
                    "{}: lost something without `v2-unstable`\n      expected: {expected}\n      output:   {out}",
                    ex.id()
                ));
            }
        }
        let files: &[bool] = if ex.unstable { &[true] } else { &[false, true] };
        for &unstable in files {
            let label = if unstable { "unstable" } else { "stable" };
            let Some(input_ok) = is_valid(unstable, &ex.def, &ex.value) else {
                failures.push(format!("{}: no def in the {label} schema", ex.id()));
                continue;
            };
            match ex.lenient {
                Lenient::No if !input_ok => failures.push(format!(
                    "{}: input invalid against the {label} schema: {:?}",
                    ex.id(),
                    errors(unstable, &ex.def, &ex.value)
                )),
                Lenient::Fallback if input_ok => failures.push(format!(
                    "{}: marked lenient but the input is valid ({label})",
                    ex.id()
                )),
                _ => {}
            }
            if is_valid(unstable, &ex.def, &output) == Some(false) {
                failures.push(format!(
                    "{}: output invalid against the {label} schema: {:?}\n      output: {out}",
                    ex.id(),
                    errors(unstable, &ex.def, &output)
                ));
            }
        }
    }
    assert!(typed > 300, "suspiciously few typed examples ({typed})");
    failures.finish("v2 corpus examples failed");
}

/// The definitions this build must cover: the stable ones, and the unstable
/// ones with `v2-unstable`.
fn covered_defs() -> Vec<(&'static String, &'static Value, bool)> {
    let mut out: Vec<_> = defs(false).iter().map(|(k, v)| (k, v, false)).collect();
    if cfg!(feature = "v2-unstable") {
        out.extend(
            defs(true)
                .iter()
                .filter(|(k, _)| !defs(false).contains_key(*k))
                .filter(|(k, _)| !UNTYPED.contains(&k.as_str()))
                .map(|(k, v)| (k, v, true)),
        );
    }
    out
}

#[test]
fn every_def_has_an_example_with_a_rust_counterpart() {
    let mut missing = Vec::new();
    for (name, _, _) in covered_defs() {
        if !has_counterpart(name) {
            missing.push(format!("{name} (no Rust counterpart)"));
        } else if examples_of(name).next().is_none() {
            missing.push(format!("{name} (no example)"));
        }
    }
    assert!(
        missing.is_empty(),
        "v2 definitions not covered:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn every_union_alternative_is_covered() {
    let mut failures = Failures::default();
    let mut total = 0;
    for unstable in [false, true] {
        if unstable && !cfg!(feature = "v2-unstable") {
            continue;
        }
        for (name, schema) in defs(unstable) {
            if UNTYPED.contains(&name.as_str()) {
                continue;
            }
            let inputs: Vec<&Value> = examples_of(name)
                .filter(|ex| ex.lenient == Lenient::No && (unstable || !ex.unstable))
                .map(|ex| &ex.value)
                .collect();
            let base = format!("/$defs/{name}");
            let mut unions = vec![(name.clone(), alternatives_at(schema, &base), None)];
            for (prop, ps) in schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let alts = alternatives_at(ps, &format!("{base}/properties/{prop}"));
                if alts.iter().filter(|(_, a)| !is_null_schema(a)).count() >= 2 {
                    unions.push((format!("{name}.{prop}"), alts, Some(prop.clone())));
                }
            }
            for (label, alts, property) in unions {
                let offered: Vec<&Value> = match &property {
                    None => inputs.clone(),
                    Some(p) => inputs.iter().filter_map(|v| v.get(p)).collect(),
                };
                for (pointer, alt) in alts {
                    total += 1;
                    let v = validator(unstable, &pointer)
                        .unwrap_or_else(|| panic!("no validator at {pointer}"));
                    if !offered.iter().any(|value| v.is_valid(value)) {
                        failures.push(format!(
                            "{label}: alternative `{}` ({pointer}{})",
                            alt_label(alt),
                            if unstable { ", unstable" } else { "" }
                        ));
                    }
                }
            }
        }
    }
    assert!(total > 150, "suspiciously few alternatives ({total})");
    failures.finish("v2 union alternatives without an example");
}

/// Every `const` and `enum` value written inline in a schema.
fn inline_consts(schema: &Value, out: &mut Vec<Value>) {
    match schema {
        Value::Object(map) => {
            if let Some(c) = map.get("const") {
                out.push(c.clone());
            }
            if let Some(Value::Array(values)) = map.get("enum") {
                out.extend(values.iter().cloned());
            }
            for (k, v) in map {
                match k.as_str() {
                    "properties" => {
                        for sub in v.as_object().into_iter().flat_map(|m| m.values()) {
                            inline_consts(sub, out);
                        }
                    }
                    "const" | "enum" | "default" | "examples" => {}
                    _ => inline_consts(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| inline_consts(i, out)),
        _ => {}
    }
}

fn contains_value(haystack: &Value, needle: &Value) -> bool {
    haystack == needle
        || match haystack {
            Value::Object(m) => m.values().any(|v| contains_value(v, needle)),
            Value::Array(a) => a.iter().any(|v| contains_value(v, needle)),
            _ => false,
        }
}

#[test]
fn every_enum_value_is_covered() {
    let mut failures = Failures::default();
    for (name, schema, _) in covered_defs() {
        let mut consts = Vec::new();
        inline_consts(schema, &mut consts);
        for c in consts {
            if !examples_of(name).any(|ex| contains_value(&ex.value, &c)) {
                failures.push(format!("{name}: value {c}"));
            }
        }
    }
    failures.finish("v2 const values without an example");
}

/// The properties a definition may have: its own, its alternatives' and those
/// of the definitions they pull in with `allOf`.
fn all_properties(unstable: bool, schema: &Value) -> BTreeMap<String, Value> {
    let defs = defs(unstable);
    let mut out = BTreeMap::new();
    let mut add = |s: &Value| {
        for (k, v) in s
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
    };
    add(schema);
    for alt in alternatives(schema) {
        add(alt);
        for sub in alt
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(d) = sub
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|n| defs.get(n))
            {
                add(d);
            }
        }
    }
    out
}

#[test]
fn every_property_and_meta_is_exercised() {
    let mut failures = Failures::default();
    let unstable = cfg!(feature = "v2-unstable");
    for (name, schema) in defs(unstable) {
        if UNTYPED.contains(&name.as_str()) {
            continue;
        }
        for prop in all_properties(unstable, schema).keys() {
            let present =
                examples_of(name).any(|ex| ex.value.get(prop).is_some_and(|v| !v.is_null()));
            if !present {
                failures.push(format!("{name}.{prop} never appears"));
            }
            if prop == "_meta"
                && !examples_of(name).any(|ex| {
                    ex.value
                        .get("_meta")
                        .and_then(Value::as_object)
                        .is_some_and(|m| m.values().any(|v| v.is_object() || v.is_array()))
                })
            {
                failures.push(format!("{name}._meta never appears with nested content"));
            }
        }
    }
    failures.finish("v2 properties not exercised");
}

/// Properties where `null` has its own meaning (it clears a patched field).
fn null_is_meaningful(def: &str, prop: &str) -> bool {
    match def {
        "ToolCallUpdate" | "TerminalUpdate" => prop != "toolCallId" && prop != "terminalId",
        "UserMessage" | "AgentMessage" | "AgentThought" => prop == "content" || prop == "_meta",
        "CompactionUpdate" => ["summary", "error", "_meta"].contains(&prop),
        "SessionInfoUpdate" => ["title", "updatedAt"].contains(&prop),
        _ => false,
    }
}

fn allows_null(prop_schema: &Value) -> bool {
    let typed = match prop_schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(t) => t == "null",
        None => false,
    };
    typed || alternatives(prop_schema).into_iter().any(is_null_schema)
}

#[test]
fn explicit_null_equals_omitted_except_patches() {
    let mut failures = Failures::default();
    let mut checked = 0;
    let envelopes = [
        "AgentRequest",
        "ClientRequest",
        "AgentNotification",
        "ClientNotification",
    ];
    for (name, schema, _) in covered_defs() {
        if !alternatives(schema).is_empty() || envelopes.contains(&name.as_str()) {
            continue;
        }
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            continue;
        };
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for ex in examples_of(name)
            .filter(|ex| ex.typed() && ex.lenient == Lenient::No && ex.expect.is_none())
        {
            let Json::Object(obj) = &ex.ordered else {
                continue;
            };
            for (key, _) in obj {
                let Some(ps) = props.get(key) else { continue };
                if required.contains(key.as_str()) || !allows_null(ps) {
                    continue;
                }
                let with_null: Vec<(String, Json)> = obj
                    .iter()
                    .map(|(k, v)| (k.clone(), if k == key { Json::Null } else { v.clone() }))
                    .collect();
                let expected = if null_is_meaningful(name, key) {
                    with_null.clone()
                } else {
                    obj.iter().filter(|(k, _)| k != key).cloned().collect()
                };
                let input = ordered_text(&Json::Object(with_null));
                let expected = ordered_text(&Json::Object(expected));
                checked += 1;
                match roundtrip(name, None, &input) {
                    Some(Ok(out)) if out == expected => {}
                    Some(Ok(out)) => failures.push(format!(
                        "{}: `{key}: null`\n      expected: {expected}\n      output:   {out}",
                        ex.id()
                    )),
                    Some(Err(e)) => failures.push(format!("{}: `{key}: null` fails: {e}", ex.id())),
                    None => {}
                }
            }
        }
    }
    assert!(checked > 50, "suspiciously few null checks ({checked})");
    failures.finish("v2 nullable properties mishandled");
}

// ---------------------------------------------------------------------------
// Method tables

/// The methods of the v2 schema: `(method, side, is request) -> (params, response)`.
fn schema_methods(unstable: bool) -> BTreeMap<(String, String, bool), (String, Option<String>)> {
    let mut out: BTreeMap<(String, String, bool), (String, Option<String>)> = BTreeMap::new();
    for (name, d) in defs(unstable) {
        let (Some(method), Some(side)) = (
            d.get("x-method").and_then(Value::as_str),
            d.get("x-side").and_then(Value::as_str),
        ) else {
            continue;
        };
        if side == "proxy" {
            continue;
        }
        let (request, notification, response) = (
            name.ends_with("Request"),
            name.ends_with("Notification"),
            name.ends_with("Response"),
        );
        assert!(request || notification || response, "{name}: which kind?");
        let key = (method.to_string(), side.to_string(), !notification);
        let entry = out.entry(key).or_insert_with(|| (String::new(), None));
        if response {
            entry.1 = Some(name.clone());
        } else {
            entry.0 = name.clone();
        }
    }
    out
}

fn side_str(side: Side) -> &'static str {
    side.as_str()
}

#[test]
fn tables_match_the_v2_schema() {
    let unstable = cfg!(feature = "v2-unstable");
    let mut expected = schema_methods(unstable);
    let mut failures = Failures::default();
    let tables: [(&[MethodInfo], Side); 3] = [
        (v2::AGENT_METHODS, Side::Agent),
        (v2::CLIENT_METHODS, Side::Client),
        (v2::PROTOCOL_METHODS, Side::Protocol),
    ];
    for (table, side) in tables {
        for info in table {
            assert_eq!(
                info.handled_by, side,
                "{} is in the wrong table",
                info.method
            );
            let key = (
                info.method.to_string(),
                side_str(side).to_string(),
                info.kind == MethodKind::Request,
            );
            match expected.remove(&key) {
                None => failures.push(format!("{key:?}: not in the v2 schema")),
                Some((params, response)) => {
                    if params != info.params {
                        failures.push(format!(
                            "{}: params {} vs {params}",
                            info.method, info.params
                        ));
                    }
                    if response.as_deref() != info.response {
                        failures.push(format!(
                            "{}: response {:?} vs {response:?}",
                            info.method, info.response
                        ));
                    }
                }
            }
        }
    }
    for key in expected.keys() {
        failures.push(format!("{key:?}: in the v2 schema, not in a table"));
    }
    failures.finish("v2 table mismatches");
}

#[test]
fn no_v2_method_is_listed_twice_and_v1_only_ones_are_gone() {
    let mut seen = BTreeSet::new();
    for info in v2::AGENT_METHODS.iter().chain(v2::CLIENT_METHODS) {
        assert!(
            seen.insert((
                info.method,
                info.kind == MethodKind::Request,
                info.handled_by.as_str()
            )),
            "{} twice",
            info.method
        );
    }
    for gone in [
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
        "session/load",
        "session/set_mode",
        "authenticate",
        "logout",
    ] {
        assert!(v2::method_info(gone).is_none(), "{gone} is not a v2 method");
        assert!(
            acp_schema::method_info(gone).is_some(),
            "{gone} is a v1 method"
        );
    }
}

#[test]
fn routing_enums_refuse_unknown_and_v1_only_methods() {
    let params = RawValue::from_string("{}".into()).unwrap();
    for m in ["fs/read_text_file", "session/load", "nope"] {
        assert!(matches!(
            v2::AgentRequest::decode(m, Some(&params)),
            Err(acp_schema::ParamsError::UnknownMethod(_))
        ));
        assert!(matches!(
            v2::ClientRequest::decode(m, Some(&params)),
            Err(acp_schema::ParamsError::UnknownMethod(_))
        ));
    }
    let ext = v2::ClientRequest::decode("_acme/x", Some(&params)).unwrap();
    assert_eq!(ext.method(), "_acme/x");
}

// ---------------------------------------------------------------------------
// Behaviour the corpus shows only in passing

#[test]
fn a_patch_tells_null_from_absent() {
    let update: v2::ToolCallUpdate =
        acp_schema::decode(r#"{"toolCallId":"c","title":null,"status":"paused"}"#).unwrap();
    assert_eq!(update.title, Some(None));
    assert_eq!(update.kind, None);
    assert_eq!(update.status, Some(Some(v2::ToolCallStatus::Paused)));
    let built = v2::ToolCallUpdate::new("c")
        .clear_title()
        .status(v2::ToolCallStatus::Paused);
    assert_eq!(built, update);
    // A malformed value is left out, as if absent.
    let update: v2::ToolCallUpdate = acp_schema::decode(r#"{"toolCallId":"c","title":7}"#).unwrap();
    assert_eq!(update.title, None);
}

#[test]
fn stop_reasons_sit_in_the_idle_update() {
    let raw = r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"error","error":{"code":-32603,"message":"boom"}}"#;
    let update: v2::SessionUpdate = acp_schema::decode(raw).unwrap();
    let v2::SessionUpdate::StateUpdate(state) = &update else {
        panic!("{update:?}")
    };
    let Some(v2::StopReason::Error(e)) = state.stop_reason() else {
        panic!("{state:?}")
    };
    assert_eq!(e.error.as_ref().map(|e| e.message.as_str()), Some("boom"));
    assert_eq!(serde_json::to_string(&update).unwrap(), raw);
    // Custom reasons are kept; a malformed one reads as none.
    let custom = r#"{"state":"idle","stopReason":"_acme_paused"}"#;
    let state: v2::StateUpdate = acp_schema::decode(custom).unwrap();
    assert_eq!(
        state.stop_reason(),
        Some(&v2::StopReason::Other("_acme_paused".into()))
    );
    assert_eq!(serde_json::to_string(&state).unwrap(), custom);
    let state: v2::StateUpdate = acp_schema::decode(r#"{"state":"idle","stopReason":5}"#).unwrap();
    assert_eq!(state.stop_reason(), None);
    assert_eq!(
        serde_json::to_string(&v2::SessionUpdate::idle(v2::StopReason::Cancelled)).unwrap(),
        r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"}"#
    );
}

#[test]
fn custom_enum_values_and_variants_are_kept() {
    for raw in [
        r#"{"sessionUpdate":"_acme_progress","percent":40}"#,
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","kind":"_acme_deploy","status":"_acme_queued"}"#,
        r#"{"sessionUpdate":"state_update","state":"_acme_paused","reason":"x"}"#,
    ] {
        let update: v2::SessionUpdate = acp_schema::decode(raw).unwrap();
        assert_eq!(serde_json::to_string(&update).unwrap(), raw);
    }
    let kind: v2::ToolKind = acp_schema::decode(r#""_acme_deploy""#).unwrap();
    assert_eq!(kind, v2::ToolKind::Other("_acme_deploy".into()));
}

#[test]
fn decode_errors_name_the_field() {
    let err = acp_schema::decode::<v2::UpdateSessionNotification>(
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":1}}}"#,
    )
    .unwrap_err();
    assert_eq!(err.path, "update.content.text", "{err}");
    let err = acp_schema::decode::<v2::UpdateSessionNotification>(
        r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}}"#,
    )
    .unwrap_err();
    assert!(err.message.contains("messageId"), "{err}");
    let _: DecodeError = err;
}

// ---------------------------------------------------------------------------
// The v1 types that v2 reuses (see `acp_schema::v2`'s module docs)

mod reuse {
    use super::*;
    use std::any::TypeId;

    /// The v1 schema the v1 types are written for: the newest
    /// (`latest/npm-sdk-2.4.0/`), stable or unstable.
    fn v1_defs(unstable: bool) -> &'static Map<String, Value> {
        static CELLS: [OnceLock<Value>; 2] = [OnceLock::new(), OnceLock::new()];
        let schema = CELLS[unstable as usize].get_or_init(|| {
            let file = if unstable {
                "schema.unstable.json"
            } else {
                "schema.json"
            };
            let path = common::schema_dir().join("latest/npm-sdk-2.4.0").join(file);
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
        });
        schema["$defs"].as_object().unwrap()
    }

    /// Keywords that only validate (a value this crate decodes the same
    /// either way) or document.
    const NOT_ON_THE_WIRE: &[&str] = &[
        "description",
        "title",
        "x-docs-ignore",
        "contentEncoding",
        "examples",
        "format",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "minLength",
        "pattern",
        "default",
        "x-method",
        "x-side",
        "discriminator",
    ];

    /// `schema` with what is not on the wire set aside: validation keywords,
    /// `oneOf` read as `anyOf`, a plain string alias (`MediaType`,
    /// `AbsolutePath`) inlined, `X | null` written as `type: [X, null]`, and
    /// the branches every enum and union of this crate has anyway (a bare
    /// `{"type": "string"}` next to string constants, a `not` branch for
    /// unknown tags) dropped.
    fn normalize(defs: &Map<String, Value>, schema: &Value) -> Value {
        match schema {
            Value::Object(map) => {
                if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                    let target = &defs[r.trim_start_matches("#/$defs/")];
                    let plain_string = target.get("type") == Some(&json!("string"))
                        && ["anyOf", "oneOf", "enum", "const", "properties"]
                            .iter()
                            .all(|k| target.get(k).is_none());
                    if plain_string && map.len() == 1 {
                        return json!({"type": "string"});
                    }
                }
                let mut out = Map::new();
                for (k, v) in map {
                    if NOT_ON_THE_WIRE.contains(&k.as_str()) {
                        continue;
                    }
                    let k = if k == "oneOf" { "anyOf" } else { k.as_str() };
                    let v = if k == "properties" {
                        Value::Object(
                            v.as_object()
                                .unwrap()
                                .iter()
                                .map(|(p, s)| (p.clone(), normalize(defs, s)))
                                .collect(),
                        )
                    } else {
                        normalize(defs, v)
                    };
                    out.insert(k.to_string(), v);
                }
                if out.len() == 1
                    && let Some(Value::Array(parts)) = out.get("allOf")
                    && parts.len() == 1
                {
                    return parts[0].clone();
                }
                if let Some(Value::Array(alts)) = out.get("anyOf").cloned() {
                    let null = json!({"type": "null"});
                    if alts.len() == 2 && alts.contains(&null) {
                        let other = alts.iter().find(|a| **a != null).unwrap();
                        if let Some(Value::String(t)) = other.get("type")
                            && other.as_object().unwrap().len() == 1
                        {
                            out.remove("anyOf");
                            out.insert("type".into(), json!([t, "null"]));
                            return Value::Object(out);
                        }
                    }
                    let string_consts = alts.iter().all(|a| {
                        *a == json!({"type": "string"})
                            || (a.get("type") == Some(&json!("string")) && a.get("const").is_some())
                    });
                    let kept: Vec<Value> = alts
                        .into_iter()
                        .filter(|a| !(string_consts && *a == json!({"type": "string"})))
                        .filter(|a| a.get("not").is_none())
                        .collect();
                    out.insert("anyOf".into(), Value::Array(kept));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(|i| normalize(defs, i)).collect()),
            other => other.clone(),
        }
    }

    fn refs(schema: &Value, out: &mut BTreeSet<String>) {
        match schema {
            Value::Object(map) => {
                for (k, v) in map {
                    if k == "$ref" {
                        out.insert(v.as_str().unwrap().trim_start_matches("#/$defs/").into());
                    } else {
                        refs(v, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| refs(i, out)),
            _ => {}
        }
    }

    /// The v1 types v2 declares narrower than they are (module docs).
    const SUPERSETS: &[&str] = &["RequestId", "Error", "ErrorCode"];

    /// Whether definition `name` is the same on the wire in v1 and v2,
    /// recursively.
    fn same_on_the_wire(unstable: bool, name: &str, seen: &mut BTreeSet<String>) -> bool {
        if SUPERSETS.contains(&name) || !seen.insert(name.to_string()) {
            return true;
        }
        let (v1, v2) = (v1_defs(unstable), defs(unstable));
        let (Some(a), Some(b)) = (v1.get(name), v2.get(name)) else {
            return false;
        };
        let (a, b) = (normalize(v1, a), normalize(v2, b));
        let mut inner = BTreeSet::new();
        refs(&b, &mut inner);
        a == b && inner.iter().all(|n| same_on_the_wire(unstable, n, seen))
    }

    macro_rules! reused {
        (
            stable { $($name:literal => $ty:ident),* $(,)? }
            unstable { $($uname:literal => $uty:ident),* $(,)? }
        ) => {
            /// Every v2 definition whose Rust type is v1's, and whether it is.
            fn reused() -> Vec<(&'static str, bool)> {
                #[allow(unused_mut)]
                let mut out =
                    vec![$(($name, TypeId::of::<v2::$ty>() == TypeId::of::<acp_schema::$ty>())),*];
                #[cfg(feature = "v2-unstable")]
                out.extend([
                    $(($uname, TypeId::of::<v2::$uty>() == TypeId::of::<acp_schema::$uty>())),*
                ]);
                out
            }
        };
    }

    reused! {
      stable {
        "SessionId" => SessionId, "ToolCallId" => ToolCallId, "ToolKind" => ToolKind,
        "Annotations" => Annotations, "Role" => Role, "TextContent" => TextContent,
        "ImageContent" => ImageContent, "AudioContent" => AudioContent,
        "EmbeddedResourceResource" => EmbeddedResourceResource,
        "TextResourceContents" => TextResourceContents,
        "BlobResourceContents" => BlobResourceContents, "EmbeddedResource" => EmbeddedResource,
        "TerminalId" => TerminalId, "Terminal" => Terminal, "ToolCallLocation" => ToolCallLocation,
        "PermissionOption" => PermissionOption, "PermissionOptionId" => PermissionOptionId,
        "PermissionOptionKind" => PermissionOptionKind,
        "ElicitationSessionScope" => ElicitationSessionScope,
        "ElicitationSchemaType" => ElicitationSchemaType,
        "ElicitationPropertySchema" => ElicitationPropertySchema, "StringFormat" => StringFormat,
        "EnumOption" => EnumOption, "StringPropertySchema" => StringPropertySchema,
        "NumberPropertySchema" => NumberPropertySchema,
        "IntegerPropertySchema" => IntegerPropertySchema,
        "BooleanPropertySchema" => BooleanPropertySchema, "MultiSelectItems" => MultiSelectItems,
        "StringMultiSelectItems" => StringMultiSelectItems,
        "TitledMultiSelectItems" => TitledMultiSelectItems,
        "MultiSelectPropertySchema" => MultiSelectPropertySchema, "ElicitationId" => ElicitationId,
        "ProtocolVersion" => ProtocolVersion, "Implementation" => Implementation,
        "SessionDeleteCapabilities" => SessionDeleteCapabilities,
        "SessionAdditionalDirectoriesCapabilities" => SessionAdditionalDirectoriesCapabilities,
        "AuthMethodId" => AuthMethodId, "EnvVariable" => EnvVariable,
        "SessionConfigId" => SessionConfigId,
        "SessionConfigOptionCategory" => SessionConfigOptionCategory,
        "SessionConfigValueId" => SessionConfigValueId,
        "SessionConfigSelectOption" => SessionConfigSelectOption,
        "SessionConfigGroupId" => SessionConfigGroupId,
        "SessionConfigBoolean" => SessionConfigBoolean,
        "DeleteSessionResponse" => DeleteSessionResponse,
        "CloseSessionResponse" => CloseSessionResponse, "MessageId" => MessageId,
        "TerminalExitStatus" => TerminalExitStatus, "PlanEntryPriority" => PlanEntryPriority,
        "SessionInfoUpdate" => SessionInfoUpdate, "Cost" => Cost, "UsageUpdate" => UsageUpdate,
        "NoticeSeverity" => NoticeSeverity, "Notice" => Notice, "CompactionId" => CompactionId,
        "CompactionStatus" => CompactionStatus,
        "ElicitationCapabilities" => ElicitationCapabilities,
        "ElicitationFormCapabilities" => ElicitationFormCapabilities,
        "ElicitationUrlCapabilities" => ElicitationUrlCapabilities, "HttpHeader" => HttpHeader,
        "SelectedPermissionOutcome" => SelectedPermissionOutcome,
        "RequestId" => RequestId, "Error" => Error, "ErrorCode" => ErrorCode,
        "ElicitationRequestScope" => ElicitationRequestScope,
        "ElicitationFormMode" => ElicitationFormMode, "ElicitationUrlMode" => ElicitationUrlMode,
        "ElicitationSchema" => ElicitationSchema,
        "CancelRequestNotification" => CancelRequestNotification,
      }
      unstable {
        "McpServerAcpId" => McpServerAcpId, "McpRequestId" => McpRequestId,
        "SessionSystemPromptCapabilities" => SessionSystemPromptCapabilities,
        "SessionSystemPromptModeCapabilities" => SessionSystemPromptModeCapabilities,
        "SessionSystemPromptOverrideCapabilities" => SessionSystemPromptOverrideCapabilities,
        "SessionForkCapabilities" => SessionForkCapabilities,
        "SessionTitleCapabilities" => SessionTitleCapabilities,
        "ProvidersCapabilities" => ProvidersCapabilities,
        "ListProvidersResponse" => ListProvidersResponse, "ProviderInfo" => ProviderInfo,
        "ProviderId" => ProviderId, "LlmProtocol" => LlmProtocol,
        "ProviderCurrentConfig" => ProviderCurrentConfig,
        "SetProviderResponse" => SetProviderResponse,
        "DisableProviderResponse" => DisableProviderResponse, "Usage" => Usage,
        "SetSessionTitleResponse" => SetSessionTitleResponse,
        "SubagentSessionCapabilities" => SubagentSessionCapabilities,
        "SessionCancelCapabilities" => SessionCancelCapabilities, "McpServerAcp" => McpServerAcp,
        "SystemPromptMode" => SystemPromptMode, "MessageMcpResponse" => MessageMcpResponse,
        "McpError" => McpError,
      }
    }

    /// Reused v1 types whose v2 definition is narrower: the declared supersets,
    /// and what v1 decodes with a default where v2 requires it, and always
    /// writes (`ElicitationSchema`'s `type` and `properties`).
    const REUSED_WITH_A_REASON: &[&str] = &[
        "RequestId",
        "Error",
        "ErrorCode",
        "ElicitationFormMode",
        "ElicitationSchema",
    ];

    /// Definitions the same as v1's on the wire that have a v2 type all the
    /// same, and why.
    const OWN_TYPE_ON_PURPOSE: &[(&str, &str)] = &[(
        "ListSessionsRequest",
        "types `archived` with `v2-unstable`, which v1 keeps raw",
    )];

    /// The params newtypes over identical v1 params (a method names its
    /// params type, so v2 cannot take the v1 type itself).
    const SAME_PARAMS: &[&str] = &[
        "DeleteSessionRequest",
        "CloseSessionRequest",
        "CompleteElicitationNotification",
        "ListProvidersRequest",
        "SetProviderRequest",
        "DisableProviderRequest",
        "SetSessionTitleRequest",
        "MessageMcpRequest",
        "MessageMcpNotification",
    ];

    #[test]
    fn reused_types_are_the_same_on_the_wire() {
        let mut failures = Failures::default();
        for (name, is_v1) in reused() {
            if !is_v1 {
                failures.push(format!("{name}: v2's type is not v1's"));
            }
            if REUSED_WITH_A_REASON.contains(&name) {
                continue;
            }
            for unstable in [false, true] {
                if !defs(unstable).contains_key(name) {
                    continue;
                }
                if !same_on_the_wire(unstable, name, &mut BTreeSet::new()) {
                    failures.push(format!(
                        "{name}: reused, but its v1 and v2 definitions differ ({})",
                        if unstable { "unstable" } else { "stable" }
                    ));
                }
            }
        }
        for name in REUSED_WITH_A_REASON {
            if same_on_the_wire(false, name, &mut BTreeSet::new()) && !SUPERSETS.contains(name) {
                failures.push(format!("{name}: identical now; drop it from the reasons"));
            }
            if examples_of(name).next().is_none() {
                failures.push(format!("{name}: no v2 example proves it"));
            }
        }
        failures.finish("reuse problems");
    }

    #[test]
    fn no_identical_definition_got_a_type_of_its_own() {
        let reused: BTreeSet<&str> = reused().into_iter().map(|(n, _)| n).collect();
        let mut failures = Failures::default();
        for (name, _, unstable) in covered_defs() {
            let v1_typed = super::common::PLAIN_DEFS.contains(&name.as_str())
                || super::common::UNSTABLE_DEFS.iter().any(|(d, _)| d == name);
            if v1_typed
                && same_on_the_wire(unstable, name, &mut BTreeSet::new())
                && !reused.contains(name.as_str())
                && !SAME_PARAMS.contains(&name.as_str())
                && !OWN_TYPE_ON_PURPOSE.iter().any(|(n, _)| n == name)
                && !["ExtRequest", "ExtResponse", "ExtNotification"].contains(&name.as_str())
                && (unstable || same_on_the_wire(true, name, &mut BTreeSet::new()))
            {
                failures.push(format!("{name}: the same as v1's; reuse v1's type"));
            }
        }
        failures.finish("missed reuse");
    }
}

//! What a tool is. A tool implements the typed [`Tool`]: its input is a struct the model's
//! arguments deserialize into (once, with errors naming the field) and whose JSON Schema is
//! generated from it; `prepare` turns it into a typed plan of the call, `run` performs that
//! plan. [`erase`] wraps any tool into the object-safe [`AnyTool`] the registry holds and
//! the turn calls, so the engine handles every tool alike and no plan is ever downcast: the
//! erased prepared call ([`Ready`]) carries its tool and its typed plan inside it.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::input::parse;
use super::{Access, CallReport, Context, Kind, Location, Output, ToolError, schema};
use crate::chat::ToolSpec;

/// A tool, typed.
pub trait Tool: Send + Sync + 'static {
    /// The model's arguments. Doc comments on its fields are the schema's descriptions.
    type Input: DeserializeOwned + JsonSchema + Send;
    /// What `prepare` worked out and `run` needs.
    type Plan: Send + Sync + 'static;

    /// Its name, kind and description; [`erase`] reads them once.
    fn about(&self) -> About;
    /// The JSON Schema of the arguments; generated from `Input` unless the tool knows better
    /// (an MCP server's tool brings its own).
    fn parameters(&self) -> Value {
        schema::parameters::<Self::Input>()
    }
    /// Validates `input` and works out what the call will touch. No side effects.
    fn prepare(
        &self,
        input: Self::Input,
        ctx: &Context,
    ) -> impl Future<Output = Result<Planned<Self::Plan>, ToolError>> + Send;
    /// Performs a prepared call, reporting live output (and the plan) to `report`.
    fn run(
        &self,
        plan: Self::Plan,
        ctx: &Context,
        report: &dyn CallReport,
    ) -> impl Future<Output = Result<Output, ToolError>> + Send;
    /// Releases what the tool holds for its session (a server's process, a connection): the
    /// session is closing. The built-in tools hold nothing.
    fn shutdown(&self) {}
}

/// What the model and the client are told about a tool.
pub struct About {
    /// The name the model calls it by.
    pub name: String,
    pub kind: Kind,
    /// What the model is told it does.
    pub description: String,
}

impl About {
    pub fn new(name: impl Into<String>, kind: Kind, description: impl Into<String>) -> Self {
        About {
            name: name.into(),
            kind,
            description: description.into(),
        }
    }
}

/// A validated call, as its tool planned it.
pub struct Planned<P> {
    /// Human title, e.g. "Read src/main.rs (lines 1–200)".
    pub title: String,
    pub locations: Vec<Location>,
    pub access: Access,
    pub plan: P,
}

impl<P> Planned<P> {
    pub fn new(title: String, locations: Vec<Location>, access: Access, plan: P) -> Self {
        Planned {
            title,
            locations,
            access,
            plan,
        }
    }
}

/// Any tool, as the registry holds it and the turn calls it.
pub trait AnyTool: Send + Sync {
    /// What the model is told about the tool (made once, when the tool was erased).
    fn spec(&self) -> &ToolSpec;
    fn kind(&self) -> Kind;
    /// Deserializes `input` and prepares the call.
    fn prepare<'a>(
        &'a self,
        input: &'a Value,
        ctx: &'a Context,
    ) -> BoxFuture<'a, Result<Ready, ToolError>>;
    fn shutdown(&self);
}

/// A prepared call of any tool, ready to run once permission is granted.
pub struct Ready {
    pub title: String,
    pub locations: Vec<Location>,
    pub access: Access,
    call: Box<dyn Run>,
}

impl Ready {
    /// Performs the call.
    pub async fn run(self, ctx: &Context, report: &dyn CallReport) -> Result<Output, ToolError> {
        self.call.run(ctx, report).await
    }
}

/// The erased rest of a call: its tool and its typed plan.
trait Run: Send + Sync {
    fn run<'a>(
        self: Box<Self>,
        ctx: &'a Context,
        report: &'a dyn CallReport,
    ) -> BoxFuture<'a, Result<Output, ToolError>>;
}

struct Pending<T: Tool> {
    tool: Arc<T>,
    plan: T::Plan,
}

impl<T: Tool> Run for Pending<T> {
    fn run<'a>(
        self: Box<Self>,
        ctx: &'a Context,
        report: &'a dyn CallReport,
    ) -> BoxFuture<'a, Result<Output, ToolError>> {
        Box::pin(async move { self.tool.run(self.plan, ctx, report).await })
    }
}

/// A typed tool with its spec and kind, made once.
struct Erased<T> {
    tool: Arc<T>,
    spec: ToolSpec,
    kind: Kind,
}

/// The one way a typed tool becomes an [`AnyTool`].
pub fn erase<T: Tool>(tool: T) -> Arc<dyn AnyTool> {
    let About {
        name,
        kind,
        description,
    } = tool.about();
    let spec = ToolSpec {
        name,
        description,
        parameters: Arc::new(tool.parameters()),
    };
    Arc::new(Erased {
        tool: Arc::new(tool),
        spec,
        kind,
    })
}

impl<T: Tool> AnyTool for Erased<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn kind(&self) -> Kind {
        self.kind
    }

    fn prepare<'a>(
        &'a self,
        input: &'a Value,
        ctx: &'a Context,
    ) -> BoxFuture<'a, Result<Ready, ToolError>> {
        Box::pin(async move {
            let input: T::Input = parse(input)?;
            let planned = self.tool.prepare(input, ctx).await?;
            Ok(Ready {
                title: planned.title,
                locations: planned.locations,
                access: planned.access,
                call: Box::new(Pending {
                    tool: self.tool.clone(),
                    plan: planned.plan,
                }),
            })
        })
    }

    fn shutdown(&self) {
        self.tool.shutdown();
    }
}

//! A typed view of an annotated impl block that borrows from syn: the harness, its members
//! (`#[ai_function]` methods with their parameters, descriptions and options, and `#[sub_agent]`
//! methods) in declaration order, and how the registry constructs it. Building it reads the
//! helper attributes; shape checks are in `valid`.

use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, Ident, ImplItem, ImplItemFn, ItemImpl, Lit, LitStr, Meta, Pat,
    Path, ReturnType, Type,
};

use super::args::{self, Annotations, FunctionArgs, HarnessArgs, SubAgentArgs};
use super::errors::Errors;

pub struct Harness<'a> {
    pub item: &'a ItemImpl,
    pub args: HarnessArgs,
    pub ty: &'a Type,
    /// The last path segment of the self type; `None` when it is not a path.
    pub type_ident: Option<&'a Ident>,
    pub name: String,
    pub name_span: Span,
    /// The members, `#[ai_function]` and `#[sub_agent]` methods, in declaration order.
    pub functions: Vec<Function<'a>>,
    pub constructor: Constructor<'a>,
    /// The `#[ai_function]` and `#[sub_agent]` paths as written, so the user's imports of them
    /// count as used.
    pub helper_paths: Vec<&'a Path>,
}

/// What kind of member a method is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberKind {
    /// `#[ai_function]`: a tool whose body is the method.
    Function,
    /// `#[sub_agent]`: the method returns the `SubAgent` that becomes the tool.
    SubAgent,
}

impl MemberKind {
    /// The attribute's name, for messages.
    pub fn attr(self) -> &'static str {
        match self {
            MemberKind::Function => "ai_function",
            MemberKind::SubAgent => "sub_agent",
        }
    }
}

/// The member attributes a method of an annotated impl block may carry.
pub const MEMBER_ATTRS: [&str; 2] = ["ai_function", "sub_agent"];

pub struct Function<'a> {
    pub kind: MemberKind,
    pub method: &'a ImplItemFn,
    pub name: String,
    pub name_span: Span,
    pub description: Template,
    pub condition: Option<Expr>,
    pub timeout_ms: Option<u64>,
    pub requires_approval: bool,
    /// `read_only`, `destructive`, `idempotent`, `open_world` as written.
    pub annotations: Annotations,
    pub params: Vec<Param<'a>>,
    pub returns_result: bool,
    /// The type of the value the method hands back (`T` of a `Result<T, E>`), when it can be
    /// named outside the method: the output schema is probed on it.
    pub output_type: Option<&'a Type>,
}

pub struct Param<'a> {
    pub pat: &'a Pat,
    /// The binding of a `name: Type` or `mut name: Type` parameter.
    pub ident: Option<&'a Ident>,
    pub ty: &'a Type,
    pub kind: ParamKind,
    pub description: Option<LitStr>,
    /// `#[serde(...)]` and `#[schemars(...)]` attributes, moved to the arguments struct.
    pub forwarded: Vec<&'a Attribute>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Deserialized from the model's arguments and part of the schema.
    Argument,
    /// `&FunctionContext`
    ContextRef,
    /// `FunctionContext`
    Context,
    /// `CancellationToken`
    Cancellation,
}

pub enum Constructor<'a> {
    /// `fn new(config: C) -> Self`
    Config(&'a Type),
    /// `fn new() -> Self`
    New,
    /// `Default`
    Default,
}

impl<'a> Harness<'a> {
    pub fn from_syn(item: &'a ItemImpl, args: HarnessArgs, errors: &Errors) -> Self {
        let ty = &*item.self_ty;
        let type_ident = match ty {
            Type::Path(path) if path.qself.is_none() => path.path.segments.last().map(|s| &s.ident),
            _ => None,
        };
        let (name, name_span) = match &args.name {
            Some(lit) => (lit.value(), lit.span()),
            None => match type_ident {
                Some(ident) => (ident.unraw().to_string(), ident.span()),
                None => (String::from("Harness"), ty.span()),
            },
        };
        let mut functions = Vec::new();
        let mut helper_paths = Vec::new();
        for impl_item in &item.items {
            let ImplItem::Fn(method) = impl_item else {
                continue;
            };
            let mut marker: Option<(MemberKind, &Attribute)> = None;
            for attr in &method.attrs {
                let kind = if is_helper(attr.path(), "ai_function") {
                    MemberKind::Function
                } else if is_helper(attr.path(), "sub_agent") {
                    MemberKind::SubAgent
                } else {
                    continue;
                };
                match marker {
                    Some((first, _)) if first == kind => errors.spanned(
                        attr,
                        format!(
                            "duplicate `#[{}]`; put every option in one attribute",
                            kind.attr()
                        ),
                    ),
                    Some((first, _)) => errors.spanned(
                        attr,
                        format!(
                            "a method is either an `#[ai_function]` or a `#[sub_agent]`, not both; remove `#[{}]` or `#[{}]`",
                            first.attr(),
                            kind.attr()
                        ),
                    ),
                    None => {
                        marker = Some((kind, attr));
                        if !helper_paths
                            .iter()
                            .any(|p: &&Path| same_path(p, attr.path()))
                        {
                            helper_paths.push(attr.path());
                        }
                    }
                }
            }
            match marker {
                Some((MemberKind::Function, attr)) => {
                    let options = args::function_args(attr, errors);
                    functions.push(Function::from_syn(method, options, errors));
                }
                Some((MemberKind::SubAgent, attr)) => {
                    let options = args::sub_agent_args(attr, errors);
                    functions.push(Function::sub_agent(method, options, errors));
                }
                None => {
                    for param in typed_params(method) {
                        for attr in &param.attrs {
                            if is_helper(attr.path(), "ai_description") {
                                errors.spanned(
                                    attr,
                                    "`#[ai_description]` describes a parameter of an `#[ai_function]` method; add `#[ai_function]` to this method or remove it",
                                );
                            }
                        }
                    }
                }
            }
        }
        let constructor = constructor(item, type_ident);
        Harness {
            item,
            args,
            ty,
            type_ident,
            name,
            name_span,
            functions,
            constructor,
            helper_paths,
        }
    }
}

impl<'a> Function<'a> {
    fn from_syn(method: &'a ImplItemFn, options: FunctionArgs, errors: &Errors) -> Self {
        let (name, name_span) = match &options.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (
                method.sig.ident.unraw().to_string(),
                method.sig.ident.span(),
            ),
        };
        let description = match &options.description {
            Some(lit) => Template::parse(&lit.value(), lit.span(), true, errors),
            None => doc_template(&method.attrs, errors),
        };
        let params = typed_params(method)
            .map(|param| Param::from_syn(param, errors))
            .collect();
        let returns_result = match &method.sig.output {
            ReturnType::Type(_, ty) => last_segment(ty).is_some_and(|s| s == "Result"),
            ReturnType::Default => false,
        };
        let output_type = match &method.sig.output {
            ReturnType::Type(_, ty) if returns_result => ok_type(ty),
            ReturnType::Type(_, ty) => Some(&**ty),
            ReturnType::Default => None,
        }
        .filter(|ty| nameable(ty.to_token_stream()));
        Function {
            kind: MemberKind::Function,
            method,
            name,
            name_span,
            description,
            condition: options.condition,
            timeout_ms: options.timeout_ms.map(|(ms, _)| ms),
            requires_approval: options.requires_approval,
            annotations: options.annotations,
            params,
            returns_result,
            output_type,
        }
    }

    /// A `#[sub_agent]` method: a member without description, options or schema of its own.
    fn sub_agent(method: &'a ImplItemFn, options: SubAgentArgs, errors: &Errors) -> Self {
        let (name, name_span) = match &options.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (
                method.sig.ident.unraw().to_string(),
                method.sig.ident.span(),
            ),
        };
        let params = typed_params(method)
            .map(|param| Param::from_syn(param, errors))
            .collect();
        Function {
            kind: MemberKind::SubAgent,
            method,
            name,
            name_span,
            description: Template {
                segments: Vec::new(),
                span: name_span,
            },
            condition: None,
            timeout_ms: None,
            requires_approval: false,
            annotations: Annotations::default(),
            params,
            returns_result: false,
            output_type: None,
        }
    }

    pub fn arguments(&self) -> impl Iterator<Item = &Param<'a>> {
        self.params.iter().filter(|p| p.kind == ParamKind::Argument)
    }
}

impl<'a> Param<'a> {
    fn from_syn(param: &'a syn::PatType, errors: &Errors) -> Self {
        let ident = match &*param.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => Some(&pat.ident),
            _ => None,
        };
        let ty = &*param.ty;
        let kind = match ty {
            Type::Reference(r) if r.mutability.is_none() => {
                if last_segment(&r.elem).is_some_and(|s| s == "FunctionContext") {
                    ParamKind::ContextRef
                } else {
                    ParamKind::Argument
                }
            }
            _ => match last_segment(ty).as_deref() {
                Some("FunctionContext") => ParamKind::Context,
                Some("CancellationToken") => ParamKind::Cancellation,
                _ => ParamKind::Argument,
            },
        };
        let mut description = None;
        let mut forwarded = Vec::new();
        for attr in &param.attrs {
            if is_helper(attr.path(), "ai_description") {
                let text = args::ai_description(attr, errors);
                if description.is_some() {
                    errors.spanned(
                        attr,
                        "duplicate `#[ai_description]`; keep one per parameter",
                    );
                } else {
                    description = text;
                }
            } else if attr.path().is_ident("serde") || attr.path().is_ident("schemars") {
                forwarded.push(attr);
            }
        }
        Param {
            pat: &param.pat,
            ident,
            ty,
            kind,
            description,
            forwarded,
        }
    }
}

fn typed_params(method: &ImplItemFn) -> impl Iterator<Item = &syn::PatType> {
    method.sig.inputs.iter().filter_map(|arg| match arg {
        FnArg::Typed(param) => Some(param),
        FnArg::Receiver(_) => None,
    })
}

/// `ai_function`, `hpd_agent::ai_function`, ...: matched by the last segment.
pub fn is_helper(path: &Path, name: &str) -> bool {
    path.segments.last().is_some_and(|s| s.ident == name)
}

fn same_path(a: &Path, b: &Path) -> bool {
    a.leading_colon.is_some() == b.leading_colon.is_some()
        && a.segments.len() == b.segments.len()
        && a.segments
            .iter()
            .zip(&b.segments)
            .all(|(x, y)| x.ident == y.ident)
}

/// The last path segment of a type, seen through references, parentheses and groups.
/// `T` of `Result<T, E>` (or of an alias `Result<T>`).
fn ok_type(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Path(path) => match &path.path.segments.last()?.arguments {
            syn::PathArguments::AngleBracketed(args) => {
                args.args.iter().find_map(|arg| match arg {
                    syn::GenericArgument::Type(ty) => Some(ty),
                    _ => None,
                })
            }
            _ => None,
        },
        Type::Group(group) => ok_type(&group.elem),
        Type::Paren(paren) => ok_type(&paren.elem),
        _ => None,
    }
}

/// Whether a return type can be written in another item: no `impl Trait`, no lifetime of the
/// method's own (`'_` and `'static` are fine).
fn nameable(tokens: proc_macro2::TokenStream) -> bool {
    let mut after_quote = false;
    tokens.into_iter().all(|tree| {
        let ok = match &tree {
            proc_macro2::TokenTree::Ident(ident) => {
                !(ident == "impl" || after_quote && ident != "static" && ident != "_")
            }
            proc_macro2::TokenTree::Group(group) => nameable(group.stream()),
            proc_macro2::TokenTree::Punct(_) | proc_macro2::TokenTree::Literal(_) => true,
        };
        after_quote = matches!(&tree, proc_macro2::TokenTree::Punct(p) if p.as_char() == '\'');
        ok
    })
}

pub fn last_segment(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

/// `fn new(config: C) -> Self`, else `fn new() -> Self`, else `Default`.
fn constructor<'a>(item: &'a ItemImpl, type_ident: Option<&Ident>) -> Constructor<'a> {
    for impl_item in &item.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let sig = &method.sig;
        let returns_self = match &sig.output {
            ReturnType::Type(_, ty) => last_segment(ty)
                .is_some_and(|s| s == "Self" || type_ident.is_some_and(|ident| *ident == s)),
            ReturnType::Default => false,
        };
        if sig.ident != "new"
            || !returns_self
            || sig.asyncness.is_some()
            || !sig.generics.params.is_empty()
        {
            continue;
        }
        let mut params = sig.inputs.iter();
        match (params.next(), params.next()) {
            (None, _) => return Constructor::New,
            (Some(FnArg::Typed(param)), None) => return Constructor::Config(&param.ty),
            _ => {}
        }
    }
    Constructor::Default
}

/// A description with `{metadata.field}` placeholders.
pub struct Template {
    pub segments: Vec<Segment>,
    pub span: Span,
}

pub enum Segment {
    Text(String),
    Placeholder(Placeholder),
}

pub struct Placeholder {
    /// `["provider"]` for `{metadata.provider}`; more for `{metadata.a.b}`.
    pub field: Vec<String>,
    pub span: Span,
}

impl Template {
    /// Parses `text`. `strict` (a `description = "..."` literal): every brace is either a
    /// placeholder or doubled. Doc comments are also rustdoc, where `{{` would read oddly, so
    /// there only `{metadata.…}` is special and other braces are text.
    pub fn parse(text: &str, span: Span, strict: bool, errors: &Errors) -> Self {
        let mut segments = Vec::new();
        let mut current = String::new();
        let mut rest = text;
        while let Some(i) = rest.find(['{', '}']) {
            current.push_str(&rest[..i]);
            let tail = &rest[i..];
            if tail.starts_with("{{") || tail.starts_with("}}") {
                current.push_str(if strict { &tail[..1] } else { &tail[..2] });
                rest = &tail[2..];
                continue;
            }
            if let Some(body) = tail.strip_prefix('{') {
                if let Some(end) = body.find('}') {
                    let inner = &body[..end];
                    if let Some(field) = placeholder_field(inner) {
                        if !current.is_empty() {
                            segments.push(Segment::Text(std::mem::take(&mut current)));
                        }
                        segments.push(Segment::Placeholder(Placeholder { field, span }));
                        rest = &body[end + 1..];
                        continue;
                    }
                    if strict {
                        errors.error(
                            span,
                            format!(
                                "invalid placeholder `{{{inner}}}` in the description; write `{{metadata.field}}` to insert a metadata field, or `{{{{` and `}}}}` for literal braces"
                            ),
                        );
                        current.push_str(&tail[..end + 2]);
                        rest = &body[end + 1..];
                        continue;
                    }
                } else if strict {
                    errors.error(
                        span,
                        "unclosed `{` in the description; write `{metadata.field}` to insert a metadata field, or `{{` for a literal brace",
                    );
                }
            } else if strict {
                errors.error(
                    span,
                    "unmatched `}` in the description; write `}}` for a literal brace",
                );
            }
            current.push_str(&tail[..1]);
            rest = &tail[1..];
        }
        current.push_str(rest);
        if !current.is_empty() {
            segments.push(Segment::Text(current));
        }
        Template { segments, span }
    }

    pub fn placeholders(&self) -> impl Iterator<Item = &Placeholder> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Placeholder(p) => Some(p),
            Segment::Text(_) => None,
        })
    }

    /// The description with placeholders rendered as empty strings (used without metadata).
    pub fn static_text(&self) -> String {
        self.segments
            .iter()
            .map(|s| match s {
                Segment::Text(t) => t.as_str(),
                Segment::Placeholder(_) => "",
            })
            .collect()
    }
}

/// `metadata.a.b` gives `["a", "b"]`; anything else is not a placeholder.
fn placeholder_field(inner: &str) -> Option<Vec<String>> {
    let path = inner.trim().strip_prefix("metadata.")?;
    let field: Vec<String> = path.split('.').map(str::to_owned).collect();
    let valid = field.iter().all(|part| {
        let mut chars = part.chars();
        match chars.next() {
            Some(c) if c.is_ascii_digit() => part.parse::<u32>().is_ok(),
            Some(c) if c == '_' || c.is_ascii_alphabetic() => {
                part != "_" && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
            }
            _ => false,
        }
    });
    valid.then_some(field)
}

/// The doc comment: each line trimmed, joined with `\n`, blank lines at both ends removed.
fn doc_template(attrs: &[Attribute], errors: &Errors) -> Template {
    let mut lines = Vec::new();
    let mut span = None;
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        // #[doc = "..."] (what `///` and `/** */` become)
        let Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) = &nv.value
        else {
            // #[doc = include_str!("...")] or #[doc = concat!(...)]: unknown until rustc runs it
            errors.spanned(
                &nv.value,
                "a computed doc attribute cannot be the function description; write `description = \"...\"` in `#[ai_function(...)]`",
            );
            continue;
        };
        let value = s.value();
        if span.is_none() || value.contains("{metadata.") {
            // Placeholder errors point at the line that has one.
            span = Some(attr.span());
        }
        let mut attr_lines: Vec<String> = value.split('\n').map(|l| l.trim().to_owned()).collect();
        if attr_lines.len() > 1 {
            // Only a `/** ... */` comment gives one attribute of several lines.
            strip_block_stars(&mut attr_lines);
        }
        lines.extend(attr_lines);
    }
    let start = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |i| i + 1);
    let text = lines[start..end].join("\n");
    Template::parse(&text, span.unwrap_or_else(Span::call_site), false, errors)
}

/// Drops the ` * ` margin of a `/** ... */` comment, as rustdoc does: when every non-empty
/// line starts with `*`.
fn strip_block_stars(lines: &mut [String]) {
    let mut non_empty = lines.iter().filter(|l| !l.is_empty()).peekable();
    if non_empty.peek().is_none() || !non_empty.all(|l| l.starts_with('*')) {
        return;
    }
    for line in lines.iter_mut().filter(|l| !l.is_empty()) {
        let rest = &line[1..];
        *line = rest.strip_prefix(' ').unwrap_or(rest).to_owned();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(text: &str, strict: bool) -> (Template, usize) {
        let errors = Errors::default();
        let template = Template::parse(text, Span::call_site(), strict, &errors);
        (template, errors.len())
    }

    fn fields(template: &Template) -> Vec<String> {
        template.placeholders().map(|p| p.field.join(".")).collect()
    }

    #[test]
    fn placeholders_and_escapes() {
        let (t, errors) = template(
            "Search {metadata.provider} ({{beta}}) {metadata.a.0}.",
            true,
        );
        assert_eq!(errors, 0);
        assert_eq!(fields(&t), ["provider", "a.0"]);
        assert_eq!(t.static_text(), "Search  ({beta}) .");
    }

    #[test]
    fn strict_templates_reject_other_braces() {
        for text in [
            "{count}",
            "open {",
            "close }",
            "{metadata.}",
            "{metadata.a-b}",
        ] {
            let (_, errors) = template(text, true);
            assert!(errors > 0, "{text} should be an error");
        }
        // One mistake, one error: the closing brace of an invalid placeholder is not reported
        // again.
        assert_eq!(template("{count}", true).1, 1);
    }

    #[test]
    fn doc_comments_keep_other_braces() {
        let (t, errors) = template("Returns {\"a\": 1} from {metadata.x} and {{y}}", false);
        assert_eq!(errors, 0);
        assert_eq!(fields(&t), ["x"]);
        assert_eq!(t.static_text(), "Returns {\"a\": 1} from  and {{y}}");
    }

    #[test]
    fn doc_descriptions_trim_lines_and_blank_ends() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[doc = ""]),
            syn::parse_quote!(#[doc = "  First line.  "]),
            syn::parse_quote!(#[doc = ""]),
            syn::parse_quote!(#[doc = " Second.\n   Third."]),
            syn::parse_quote!(#[doc = "   "]),
            syn::parse_quote!(#[inline]),
        ];
        let errors = Errors::default();
        let t = doc_template(&attrs, &errors);
        assert_eq!(t.static_text(), "First line.\n\nSecond.\nThird.");
        assert!(errors.is_empty());
        assert_eq!(doc_template(&[], &errors).static_text(), "");
    }
}

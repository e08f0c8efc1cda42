-- Sphinx-flavoured reStructuredText read by pandoc, written as plain markdown.
-- Loaded by rst.py; runs inside pandoc's own Lua interpreter (no package code runs).

local ADMONITIONS = {
  note = "Note", warning = "Warning", tip = "Tip", important = "Important", caution = "Caution",
  hint = "Hint", danger = "Danger", error = "Error", attention = "Attention", seealso = "See also",
  todo = "To do",
}
local VERSIONED = { versionadded = "New in version", versionchanged = "Changed in version",
                    deprecated = "Deprecated since version", versionremoved = "Removed in version" }
local DROP = { toctree = true, currentmodule = true, module = true, ["py:module"] = true,
               ["py:currentmodule"] = true, index = true, highlight = true, contents = true,
               tabularcolumns = true, sectionauthor = true, codeauthor = true, testsetup = true,
               testcleanup = true, autosummary = true, ["only"] = false, meta = true,
               ["default-role"] = true, ["default-domain"] = true, ["click:example"] = false }
local PROSE_ROLES = { ref = true, doc = true, term = true, guilabel = true, menuselection = true,
                      abbr = true, dfn = true, numref = true, download = true, sup = true, sub = true }

local SEP = "\u{241E}" -- between the signatures of one object (sphinx_rst.py)
-- kinds named with their owner (`Flask.route` inside `.. class:: Flask`), as API pages do
local MEMBER_KINDS = { method = true, attribute = true, classmethod = true, staticmethod = true,
                       property = true, decoratormethod = true, member = true, enumerator = true }
local OWNER_KINDS = { class = true, exception = true, struct = true, union = true, enum = true }
local CODE_LANG = { py = "python", js = "javascript", c = "c", cpp = "cpp" }
local WHOLE_SIG = { option = true, cmdoption = true, describe = true, object = true, event = true }

local function quote_with(label, blocks)
  local out = pandoc.List()
  local first = blocks[1]
  if first and (first.t == "Para" or first.t == "Plain") then
    local inl = pandoc.List({ pandoc.Strong(pandoc.Inlines(label)), pandoc.Space() })
    inl:extend(first.content)
    out:insert(pandoc.Para(inl))
    for i = 2, #blocks do out:insert(blocks[i]) end
  else
    out:insert(pandoc.Para({ pandoc.Strong(pandoc.Inlines(label)) }))
    out:extend(blocks)
  end
  return pandoc.BlockQuote(out)
end

function Div(el)
  local cls = el.classes[1]
  if not cls then return el.content end
  if cls == "title" then return nil end -- an admonition's title: read by its parent below
  local name = cls:gsub("^py:", "")
  if DROP[cls] then return {} end
  if cls == "doclm-object" or cls == "doclm-autodoc" or cls == "doclm-autosummary" then
    return nil -- placed by Pandoc() below, which knows the heading level around it
  end
  if ADMONITIONS[cls] then
    local blocks = pandoc.List(el.content)
    local label = ADMONITIONS[cls]
    if blocks[1] and blocks[1].t == "Div" and blocks[1].classes[1] == "title" then
      label = pandoc.utils.stringify(blocks[1])
      blocks:remove(1)
    end
    return quote_with(label .. ":", blocks)
  end
  if cls == "admonition" then
    local blocks = pandoc.List(el.content)
    local label = blocks[1] and pandoc.utils.stringify(blocks[1]) or "Note"
    blocks:remove(1)
    return quote_with(label .. ":", blocks)
  end
  if VERSIONED[cls] then
    local blocks = pandoc.List(el.content)
    local version = ""
    local first = blocks[1]
    if first and first.t == "Para" and first.content[1] and first.content[1].t == "Str" then
      version = first.content[1].text
      local rest = pandoc.List(first.content)
      rest:remove(1)
      while rest[1] and (rest[1].t == "Space" or rest[1].t == "SoftBreak") do rest:remove(1) end
      if #rest > 0 then blocks[1] = pandoc.Para(rest) else blocks:remove(1) end
    end
    return quote_with(VERSIONED[cls] .. " " .. version .. ":", blocks)
  end
  return el.content -- unknown directive: keep its text, lose the <div>
end

function Code(el)
  local role = el.attributes["role"]
  if not role then return nil end
  local text = el.text
  local label = text:match("^(.-)%s*<[^<>]*>$")
  if label and label ~= "" then text = label end
  text = text:gsub("^[~!]", "")
  if role == "pep" then return pandoc.Str("PEP " .. text) end
  if role == "rfc" then return pandoc.Str("RFC " .. text) end
  local bare = role:gsub("^[%w]+:", "")
  if PROSE_ROLES[bare] or PROSE_ROLES[role] then return pandoc.Str(text) end
  if el.text:sub(1, 1) == "~" then text = text:match("([^.]+)$") or text end
  return pandoc.Code(text)
end

function Span(el)
  if el.classes[1] == "title-ref" then return pandoc.Code(pandoc.utils.stringify(el)) end
  return nil
end

function RawBlock(el)
  if el.format ~= "markdown" then return {} end -- raw HTML/LaTeX is layout, not text
  return nil
end

function RawInline(el)
  if el.format ~= "html" and el.format ~= "markdown" then return {} end
  return nil
end

-- Sphinx object descriptions and autodoc placeholders (see sphinx_rst.py) ---------------

local function split_sigs(text)
  local out = {}
  for part in (text or ""):gmatch("[^" .. SEP .. "]+") do
    local s = part:gsub("^%s+", ""):gsub("%s+$", "")
    if s ~= "" then out[#out + 1] = s end
  end
  return out
end

-- the object's name in its signature: `pytest.raises(...)` -> pytest.raises,
-- `int foo(int a)` -> foo, `SECRET_KEY` -> SECRET_KEY, `-v, --verbose` kept whole
local function sig_name(kind, sig)
  if WHOLE_SIG[kind] then return sig end
  local before = sig:match("^(.-)%s*%(")
  if before and before ~= "" then
    local name = before:match("([%w_%.%$:~]+)%s*$")
    if name then return name end
  end
  local s = sig:gsub("^async%s+", ""):gsub("^class%s+", "")
  return s:match("^[%w_%.%$:~%-]+") or sig
end

local function last_part(name)
  return name:match("([^%.]+)$") or name
end

local nested_walk, render_object -- forward

-- filled by autodoc.py with the docstring from the package's API reference
local placeholder
placeholder = function(div, level, enclosing)
  local lines = { "kind=" .. (div.attributes["kind"] or ""), "name=" .. (div.attributes["target"] or ""),
                  "module=" .. (div.attributes["module"] or ""), "sig=" .. (div.attributes["sig"] or ""),
                  "members=" .. (div.attributes["members"] or ""), "names=" .. (div.attributes["names"] or ""),
                  "level=" .. tostring(level), "enclosing=" .. enclosing }
  local cls = div.classes[1] == "doclm-autosummary" and "doclm-autosummary" or "doclm-autodoc"
  local out = pandoc.List({ pandoc.CodeBlock(table.concat(lines, "\n"), { class = cls }) })
  -- what the directive's body adds below the docstring: text, and the directives nested in
  -- it (pymongo's `automodule` holds its `autoclass`es, each holding its `automethod`s),
  -- one level down, a member named within its class (`insert_one` -> `...Collection.insert_one`)
  local target = div.attributes["target"] or ""
  local owner_kind = OWNER_KINDS[div.attributes["kind"] or ""] and target ~= ""
  local inner = level > 0 and level + 1 or 0
  for _, b in ipairs(div.content) do
    if b.t == "Div" and b.classes[1] == "doclm-object" then
      out:extend(render_object(b, inner > 0 and inner or 7, owner_kind and last_part(target) or nil, inner > 0))
    elseif b.t == "Div" and (b.classes[1] == "doclm-autodoc" or b.classes[1] == "doclm-autosummary") then
      local t = b.attributes["target"] or ""
      if owner_kind and t ~= "" and not t:find("%.") then b.attributes["target"] = target .. "." .. t end
      out:extend(placeholder(b, inner, ""))
    else
      out:insert(nested_walk(b))
    end
  end
  return out
end


-- a heading (level <= 6) or a bold definition line, the signature, then the body
render_object = function(div, level, owner, as_heading)
  local kind = div.attributes["kind"] or "object"
  local domain = div.attributes["domain"] or "py"
  local sigs = split_sigs(div.attributes["sig"])
  if #sigs == 0 then return div.content end
  local own = sig_name(kind, sigs[1])
  local name = own
  if owner and MEMBER_KINDS[kind] and not own:find("%.") then name = owner .. "." .. own end
  local out = pandoc.List()
  -- a plain name is written as is: `pytest.__version__`, not `pytest.\_\_version\_\_`
  local label = name:match("^[%w_%.%$:~%-]+$") and pandoc.RawInline("markdown", name) or pandoc.Str(name)
  if as_heading and level <= 6 then
    out:insert(pandoc.Header(level, { label }))
  else
    out:insert(pandoc.Para({ pandoc.Strong({ label }) }))
  end
  local code = table.concat(sigs, "\n")
  if code ~= own and not (#sigs == 1 and WHOLE_SIG[kind]) then
    out:insert(pandoc.CodeBlock(code, { class = CODE_LANG[domain] or "text" }))
  end
  local inner_owner = OWNER_KINDS[kind] and last_part(name) or owner
  for _, b in ipairs(div.content) do
    if b.t == "Div" and b.classes[1] == "doclm-object" then
      out:extend(render_object(b, level + 1, inner_owner, as_heading))
    elseif b.t == "Div" and (b.classes[1] == "doclm-autodoc" or b.classes[1] == "doclm-autosummary") then
      out:extend(placeholder(b, as_heading and level + 1 or 0, last_part(name)))
    else
      out:insert(nested_walk(b))
    end
  end
  return out
end

nested_walk = function(block)
  return block:walk({
    Div = function(d)
      local cls = d.classes[1]
      if cls == "doclm-object" then return render_object(d, 7, nil, false) end
      if cls == "doclm-autodoc" or cls == "doclm-autosummary" then return placeholder(d, 0, "") end
      return nil
    end,
  })
end

function Pandoc(doc)
  local level, title = 1, ""
  local out = pandoc.List()
  for _, b in ipairs(doc.blocks) do
    if b.t == "Header" then
      level, title = b.level, pandoc.utils.stringify(b)
      out:insert(b)
    elseif b.t == "Div" and b.classes[1] == "doclm-object" then
      out:extend(render_object(b, level + 1, nil, true))
    elseif b.t == "Div" and (b.classes[1] == "doclm-autodoc" or b.classes[1] == "doclm-autosummary") then
      out:extend(placeholder(b, level + 1, title))
    else
      out:insert(nested_walk(b))
    end
  end
  doc.blocks = out
  return doc
end

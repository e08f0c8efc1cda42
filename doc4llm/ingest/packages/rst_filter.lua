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
  if cls:match("^auto") then return {} end
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
  local objects = { ["function"] = true, class = true, method = true, attribute = true, data = true,
                    exception = true, decorator = true, decoratormethod = true, classmethod = true,
                    staticmethod = true, property = true, envvar = true, option = true,
                    describe = true, object = true }
  if objects[name] then
    local blocks = pandoc.List(el.content)
    local out = pandoc.List()
    local first = blocks[1]
    if first and (first.t == "Para" or first.t == "Plain") then
      out:insert(pandoc.CodeBlock(pandoc.utils.stringify(first), { class = "python" }))
      blocks:remove(1)
    end
    out:extend(blocks)
    return out
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

import { describe, expect, it } from 'vitest';
import { isTroupeError } from '../../core/errors.js';
import {
  referencedVariables,
  renderTemplate,
  TemplateError,
  templateProblems,
  templateSyntaxError,
} from './template.js';

const render = (template: string, vars: Record<string, unknown> = {}) =>
  renderTemplate(template, vars, 'dev: system_prompt');

function renderError(template: string, vars: Record<string, unknown> = {}): TemplateError {
  try {
    render(template, vars);
  } catch (error) {
    if (error instanceof TemplateError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(template)} to fail`);
}

describe('renderTemplate', () => {
  it('renders variables, filters, loops and conditions', () => {
    expect(render('Task: {{ input }}', { input: 'build login' })).toBe('Task: build login');
    expect(render('{{ xs | join(", ") | upper }}', { xs: ['a', 'b'] })).toBe('A, B');
    expect(
      render('{% for x in xs %}[{{ loop.index }}:{{ x.name }}]{% endfor %}', {
        xs: [{ name: 'a' }, { name: 'b' }],
      }),
    ).toBe('[1:a][2:b]');
    expect(
      render('{% if reject_reason %}fix: {{ reject_reason }}{% else %}new{% endif %}', { reject_reason: '' }),
    ).toBe('new');
  });

  it('renders simple templates without nunjucks, as nunjucks does', () => {
    const vars = {
      input: 'a {{ b }} c',
      n: 0,
      nil: null,
      no: false,
      xs: ['a', 1],
      obj: { k: 1 },
      branches: [{ agent: 'x' }],
      range: 'mine',
      params: { repo: 'r' },
    };
    const templates = [
      'Step 1: {{ input }}',
      '{{n}}{{ nil }}|{{ no }}|{{ xs }}|{{ obj }}|{{ branches }}|{{ range }}',
      'line\r\n{{ input }}\r\n',
      '{{ nope }} {{ constructor }} {{ params.repo }} {{ range }}',
      'no tags }} at all\n\n',
    ];
    for (const template of templates) {
      // a comment makes any template go through nunjucks; the space before it (and the trailing
      // newline Jinja drops, which is no longer trailing) are taken off again
      const parsed = `${template.replace(/\r?\n$/, '')} {# parsed #}`;
      expect(render(template, vars), template).toBe(render(parsed, vars).slice(0, -1));
    }
  });

  it('does not escape HTML (autoescape off, as aqm)', () => {
    expect(render('{{ output }}', { output: '<b>a & "b"</b>' })).toBe('<b>a & "b"</b>');
  });

  it('renders undefined variables as "", falsy, and iterating as empty', () => {
    expect(render('[{{ nope }}]')).toBe('[]');
    expect(render('{% if nope %}yes{% else %}no{% endif %}')).toBe('no');
    expect(render('{% for x in nope %}x{% else %}empty{% endfor %}')).toBe('empty');
    expect(render('{{ nope | default("d") }}')).toBe('d');
  });

  it('renders a missing attribute of a defined value, and any attribute of null, as ""', () => {
    expect(render('[{{ a.b }}]', { a: {} })).toBe('[]');
    expect(render('[{{ a.b }}]', { a: null })).toBe('[]');
    expect(render('[{{ s.b }}]', { s: 'text' })).toBe('[]');
  });

  it('throws a one-line TemplateError naming where and what on an attribute of an undefined value', () => {
    const error = renderError('line one\n{{ nope.x }}');
    expect(isTroupeError(error)).toBe(true);
    expect(error.code).toBe('template_error');
    expect(error.where).toBe('dev: system_prompt');
    expect(error.message).toBe("dev: system_prompt: line 2, column 4: 'nope' is undefined (reading 'x')");
  });

  it('reports the undefined part of a longer lookup, with brackets for computed keys', () => {
    expect(renderError('{{ a.b.c }}', { a: {} }).detail).toBe(
      "line 1, column 4: 'a.b' is undefined (reading 'c')",
    );
    expect(renderError('{{ a[k].c }}', { a: {}, k: 'z' }).detail).toBe(
      "line 1, column 4: 'a[k]' is undefined (reading 'c')",
    );
    expect(renderError('{{ nope["k"] }}').detail).toBe("line 1, column 4: 'nope' is undefined (reading 'k')");
    expect(renderError('{{ (xs | first).name }}', { xs: [] }).detail).toBe(
      "line 1, column 4: '(expression)' is undefined (reading 'name')",
    );
  });

  it('raises for undefined lookups in every position, as Jinja does', () => {
    expect(renderError('{% if nope.x %}y{% endif %}').detail).toContain("'nope' is undefined");
    expect(renderError('{% set v %}{{ nope.q }}{% endset %}{{ v }}').detail).toContain("'nope' is undefined");
    expect(renderError('{% for x in xs %}{{ x.a.b }}{% endfor %}', { xs: [{}] }).detail).toContain(
      "'x.a' is undefined",
    );
  });

  it('refuses the keys that reach Function (the sandbox)', () => {
    expect(renderError('{{ "".constructor.constructor("return 1")() }}').detail).toBe(
      "line 1, column 4: access to 'constructor' is unsafe",
    );
    expect(renderError('{{ a[k] }}', { a: {}, k: '__proto__' }).detail).toContain("'__proto__' is unsafe");
  });

  it('refuses __lookupGetter__ and __lookupSetter__, which lead to the __proto__ accessors', () => {
    for (const template of [
      '{{ range.__lookupGetter__("__proto__").call(range) }}',
      '{{ range.__lookupSetter__("__proto__") }}',
      '{{ range["__lookupGetter__"] }}',
      '{{ range.__defineGetter__ }}',
    ]) {
      expect(renderError(template).detail, template).toMatch(
        /access to '__(lookup|define)[GS]etter__' is unsafe/,
      );
      expect(templateProblems(template), template).toEqual([
        expect.objectContaining({ message: expect.stringMatching(/is refused by the sandbox$/) }),
      ]);
    }
  });

  it('refuses the keys in the attribute arguments of filters, literal or computed, and reads the others', () => {
    const vars = { fns: [Math.max, Math.min], k: 'constructor', deep: 'a.prototype' };
    for (const template of [
      '{{ fns | sum("constructor") }}',
      '{{ fns | sum(k) }}',
      '{{ fns | join(",", "constructor") }}',
      '{{ fns | sort(attribute="prototype") | first }}',
      '{{ fns | sort(false, false, "constructor") | first }}',
      '{{ fns | selectattr("constructor") | length }}',
      '{{ fns | rejectattr("__proto__") | length }}',
      '{{ fns | groupby(deep) | dump }}',
    ]) {
      const error = renderError(template, vars);
      expect(error.detail, template).toMatch(
        /^filter '\w+': access to '(constructor|prototype|__proto__)' is unsafe$/,
      );
    }
    const items = {
      items: [
        { name: 'b', price: 2, ok: true },
        { name: 'a', price: 3, ok: false },
      ],
    };
    expect(render('{{ items | sum("price") }}', items)).toBe('5');
    expect(render('{{ items | sort(attribute="name") | join(",", "name") }}', items)).toBe('a,b');
    expect(
      render('{{ items | selectattr("ok") | length }}{{ items | rejectattr("ok") | length }}', items),
    ).toBe('11');
    expect(render('{% for g, xs in items | groupby("ok") %}{{ g }}{% endfor %}', items)).toBe('truefalse');
  });

  it('says at validation which literal attribute arguments would be refused', () => {
    expect(
      templateProblems(
        '{{ xs | sum("constructor") }}{{ xs | sort(attribute="a.__proto__") }}{{ xs | sum("price") }}',
      ),
    ).toEqual([
      expect.objectContaining({
        message: 'line 1, column 13: access to `constructor` is refused by the sandbox',
      }),
      expect.objectContaining({
        message: expect.stringMatching(/access to `__proto__` is refused by the sandbox$/),
      }),
    ]);
    expect(
      templateProblems('{{ xs | selectattr("prototype") }}{{ xs | groupby("constructor") }}'),
    ).toHaveLength(2);
    expect(templateProblems('{{ xs | map(attribute="constructor") }}')[0]?.message).toContain(
      'unknown filter `map`',
    );
  });

  it('calls methods of values', () => {
    expect(render('{{ s.toUpperCase() }}', { s: 'abc' })).toBe('ABC');
  });

  it("drops one trailing newline and normalises line ends (Jinja's lexer)", () => {
    expect(render('a\n')).toBe('a');
    expect(render('a\n\n')).toBe('a\n');
    expect(render('a\r\nb\rc')).toBe('a\nb\nc');
  });

  it("knows Jinja's True, False and None", () => {
    expect(render('{% if True and not False %}ok{% endif %}[{{ None }}]')).toBe('ok[]');
    expect(render('{{ True }}', { True: 'mine' })).toBe('mine');
  });

  it('wraps syntax errors with their position', () => {
    expect(renderError('{% for %}').message).toBe(
      'dev: system_prompt: template syntax error: line 1, column 8: unexpected token: %}',
    );
    expect(renderError('{{ a').detail).toBe('template syntax error: expected variable end');
  });

  it('wraps other render errors on one line', () => {
    expect(renderError('{{ f() }}').detail).toBe('Unable to call `f`, which is undefined or falsey');
    expect(renderError('{{ x | nofilter }}').detail).toBe('filter not found: nofilter');
    expect(renderError('{% include "other.md" %}').detail).not.toContain('\n');
  });

  it('does not change the variables it is given', () => {
    const vars = { x: 1 };
    expect(render('{% set x = 2 %}{{ x }}', vars)).toBe('2');
    expect(vars).toEqual({ x: 1 });
  });

  it('renders the same template again from its cache, and many templates beyond the cache size', () => {
    expect(render('{{ n }}', { n: 1 })).toBe('1');
    expect(render('{{ n }}', { n: 2 })).toBe('2');
    for (let i = 0; i < 600; i++) expect(render(`${i}:{{ n }}`, { n: i })).toBe(`${i}:${i}`);
    expect(render('{{ n }}', { n: 3 })).toBe('3');
  });
});

describe('templateSyntaxError', () => {
  it('is null for a template that compiles', () => {
    expect(templateSyntaxError('{{ input }}{% if x %}y{% endif %}')).toBeNull();
  });

  it('gives the message of one that does not', () => {
    expect(templateSyntaxError('{% if x %}')).toBe('parseIf: expected elif, else, or endif, got end of file');
    expect(templateSyntaxError('{% for %}')).toBe('line 1, column 8: unexpected token: %}');
  });
});

describe('referencedVariables', () => {
  it('lists the variables read, in order of first use, once each', () => {
    expect(referencedVariables('{{ input }} {{ context }} {{ input }}')).toEqual(['input', 'context']);
  });

  it('counts names used only in conditions, filters arguments, tests, lookups and calls', () => {
    expect(
      referencedVariables(
        '{% if gate_result %}{{ a | join(sep) }}{{ b is divisibleby(n) }}{{ o[key].x }}{{ f(kw=z) }}{% endif %}',
      ),
    ).toEqual(['gate_result', 'a', 'sep', 'b', 'n', 'o', 'key', 'f', 'z']);
  });

  it('leaves out names bound by for (and loop), set and macros', () => {
    const template = [
      '{% for a, b in pairs %}{{ a }}{{ b }}{{ loop.index }}{% else %}{{ a }}{% endfor %}',
      '{% set total = 1 %}{{ total }}',
      '{% set block %}{{ inside }}{% endset %}{{ block }}',
      '{% macro m(p, r=default_r) %}{{ p }}{{ r }}{{ caller() }}{{ free_in_macro }}{% endmacro %}',
      '{% call m(1) %}{{ free_in_call }}{% endcall %}',
    ].join('');
    expect(referencedVariables(template)).toEqual([
      'pairs',
      'a',
      'inside',
      'default_r',
      'free_in_macro',
      'free_in_call',
    ]);
  });

  it('respects order: a name read before it is set is free', () => {
    expect(referencedVariables('{{ x }}{% set x = 1 %}{{ x }}')).toEqual(['x']);
    expect(referencedVariables('{% for x in x %}{{ x }}{% endfor %}')).toEqual(['x']);
  });

  it('leaves out dict keys, keyword names, imports and globals', () => {
    expect(referencedVariables('{{ {k: v, "s": w} }}{{ range(3) }}{{ True }}{{ t is defined }}')).toEqual([
      'v',
      'w',
      't',
    ]);
    expect(
      referencedVariables(
        '{% import "x" as lib %}{% from "y" import a as aa, bb %}{{ lib }}{{ aa }}{{ bb }}',
      ),
    ).toEqual([]);
    expect(referencedVariables('{% block main %}{{ inner }}{% endblock %}')).toEqual(['inner']);
  });

  it('is empty for a template with a syntax error', () => {
    expect(referencedVariables('{{ input ')).toEqual([]);
  });

  it('reads simple templates without the parser, with the same answers', () => {
    const simple = [
      'Step 1: {{ input }}',
      '{{input}}\n{{ context }} and {{ params.repo.url }} {{ input }}',
      '{{ range }} {{ loop.index }} {{ _x1 }}',
      'no tags } at }} all',
      '',
      // not simple: these go to the parser
      '{{{ x }}}',
      '{ {{ x }}',
      '{{ true }} {{ x.none }}',
      '{{- x -}}',
      '{{ x | upper }}',
    ];
    for (const template of simple) {
      // a comment makes any template go through the parser
      expect(referencedVariables(template), template).toEqual(referencedVariables(`${template}{# parsed #}`));
      expect(templateSyntaxError(template) === null, template).toBe(
        templateSyntaxError(`${template}{# parsed #}`) === null,
      );
    }
  });
});

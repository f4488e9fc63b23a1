// The viewer's check of a message's links and images: what a recipient's client would trip on.
import { assert, describe, it } from "vitest"
import { references } from "../src/internal/viewer/links.js"

const problemsOf = (html: string) => references(html).map((r) => [r.kind, r.url, r.problems.join("; ")])

describe("the links and images of a message", () => {
  it("passes what works in a recipient's client", () => {
    assert.deepStrictEqual(
      problemsOf(
        '<a href="https://acme.example/a?x=1&amp;y=2">a</a><a href="mailto:bob@example.com?subject=Hi">m</a>' +
          '<a href="tel:+441234">t</a><a href="#top">top</a><img src="cid:logo@acme"><img src="data:image/png;base64,AAAA">'
      ),
      [
        // Entities are decoded, as the client reads the attribute.
        ["link", "https://acme.example/a?x=1&y=2", ""],
        ["link", "mailto:bob@example.com?subject=Hi", ""],
        ["link", "tel:+441234", ""],
        ["link", "#top", ""],
        ["image", "cid:logo@acme", ""]
      ]
    )
  })

  it("names what breaks, once per URL", () => {
    const found = new Map(
      references(
        '<a href="/account">x</a><a href="/account">again</a><a href="http://acme.example/">x</a>' +
          '<a href="https://localhost:3000/confirm">x</a><a href="https://192.168.1.20/x">x</a>' +
          '<a href="javascript:alert(1)">x</a><a href="mailto:not-an-address">x</a><a href=" https://acme.example/b ">x</a>' +
          '<a href="https://acme.example/a b">x</a><a href="http://[bad">x</a><a href="">x</a>' +
          '<table background="https://cdn.acme.example/bg.png"><tr><td><img src="https://cdn.acme.example/logo.png"></td></tr></table>'
      ).map((r) => [r.url, r.problems.join("; ")])
    )
    assert.strictEqual(found.size, 12)
    assert.include(found.get("/account"), "is relative")
    assert.include(found.get("http://acme.example/"), "is not https")
    assert.include(found.get("https://localhost:3000/confirm"), "points at localhost")
    assert.include(found.get("https://192.168.1.20/x"), "points at 192.168.1.20")
    assert.include(found.get("javascript:alert(1)"), "a javascript: URL")
    assert.include(found.get("mailto:not-an-address"), "not valid")
    assert.include(found.get(" https://acme.example/b "), "has spaces around it")
    assert.include(found.get("https://acme.example/a b"), "contains spaces")
    assert.include(found.get("http://[bad"), "is not a valid URL")
    assert.include(found.get(""), "is empty")
    assert.include(found.get("https://cdn.acme.example/bg.png"), "a remote image")
    assert.include(found.get("https://cdn.acme.example/logo.png"), "a remote image")
  })

  it("judges mailto: addresses in linear time, bounds what it reads, and names %-escapes it cannot decode", () => {
    const judged = (href: string) => references(`<a href="${href}">x</a>`)[0]?.problems.join("; ")
    const started = performance.now()
    assert.strictEqual(judged(`mailto:a@${".".repeat(8000)}@`), "names an address that is not valid")
    assert.strictEqual(
      judged(`mailto:a@${".".repeat(100_000)}@`),
      "is 100,010 characters long: clients and servers cut URLs that long"
    )
    assert.strictEqual(judged(`mailto:${"a@b.example,".repeat(600)}`), "")
    assert.isBelow(performance.now() - started, 2000)
    assert.strictEqual(judged("mailto:%E0%A4%A"), "has a %-escape that is not UTF-8: clients cannot read the address")
    for (const valid of ["mailto:a.b@c.d.example", "mailto:b%C3%A9a@c.example", "mailto:a@b.c,d@e.f?subject=x"]) {
      assert.strictEqual(judged(valid), "", valid)
    }
    for (const invalid of [
      "mailto:a@b.",
      "mailto:a@.b",
      "mailto:@b.c",
      "mailto:a@b",
      "mailto:a@@b.c",
      `mailto:${"a".repeat(250)}@b.example`
    ]) {
      assert.strictEqual(judged(invalid), "names an address that is not valid", invalid)
    }
  })
})

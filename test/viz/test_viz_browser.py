#!/usr/bin/env python3
"""uopc viz in a real browser, driven from outside the page.

Runs `uopc viz` on bundled programs, opens each page in headless Chromium
through chromedriver (Debian's chromium, chromium-driver, python3-selenium)
and checks through the DOM:
  * the page lists as many steps as `uopc --trace VERB FILE` prints lines,
    and every step shows the rule name and FILE:LINE of the same trace line;
  * stepping (right arrow key, the next button, the slider) changes the step
    number and the highlighted nodes;
  * the search box finds a rule and a node by name;
  * the page loaded nothing from anywhere (self-contained) and logged no
    error;
then saves a screenshot of each page under OUT.

  test_viz_browser.py --uopc BUILD/uopc --source REPO --out BUILD/viz [--large]

--large also times the large inputs of docs/viz.md (a 10,000-node graph, a
5,000-step trace): writing the page, and opening it until it has drawn.
Exit status: 0 pass, 1 fail, 77 skipped (a prerequisite is not installed;
the reason is printed on one line).
"""
import argparse
import os
import re
import random
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def skip(why):
    print(f"viz browser test: SKIPPED: {why} "
          "(apt-get install graphviz chromium chromium-driver python3-selenium)")
    sys.exit(SKIP)


def find(names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


CHROMIUM = find(["chromium", "chromium-browser"])
DRIVER = find(["chromedriver"]) or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
if not shutil.which("dot"):
    skip("Graphviz 'dot' is not installed")
if not CHROMIUM:
    skip("chromium is not installed")
if not DRIVER:
    skip("chromedriver is not installed")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    skip(f"python3-selenium is not installed for {sys.executable}")

FAILS = []


def check(cond, what):
    print(("  ok   " if cond else "  FAIL ") + what)
    if not cond:
        FAILS.append(what)
    return cond


def trace_lines(uopc, verb, path):
    r = subprocess.run([uopc, "--trace", verb, path], capture_output=True, text=True)
    return [l for l in r.stderr.splitlines() if l]


def browser(profile):
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    for a in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              f"--user-data-dir={profile}", "--window-size=1400,1000"]:
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=o)


def load(d, page):
    t0 = time.monotonic()
    d.get("file://" + os.path.abspath(page))
    WebDriverWait(d, 60).until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    return time.monotonic() - t0, int(d.execute_script("return document.body.dataset.readyMs"))


def highlighted(d):
    return sorted(e.get_attribute("data-id") for e in d.find_elements(By.CSS_SELECTOR, "#step-view g.hl"))


def state(d):
    return (d.find_element(By.ID, "stepno").text, d.find_element(By.ID, "rule").text,
            d.find_element(By.ID, "loc").text, highlighted(d))


def page_case(d, uopc, src, out, name, rel, verb, rule_to_find, node_to_find):
    path = os.path.join(src, rel)
    print(f"{name}: uopc viz {rel} --verb {verb}")
    lines = trace_lines(uopc, verb, path)
    page = os.path.join(out, f"{name}.html")
    r = subprocess.run([uopc, "viz", path, "--verb", verb, "-o", page], capture_output=True, text=True)
    if not check(r.returncode == 0, f"uopc viz exits 0 ({r.stderr.strip()})"):
        return
    load(d, page)
    n = len(lines)
    items = d.find_elements(By.CSS_SELECTOR, "#step-list li")
    check(n > 0 and len(items) == n, f"the page lists {len(items)} steps; uopc --trace {verb} printed {n} lines")
    check(d.find_element(By.ID, "stepno").text == f"step 1 / {n}", f"step counter reads '{d.find_element(By.ID, 'stepno').text}'")
    check(d.find_element(By.ID, "slider").get_attribute("max") == str(n), "the slider has one position per step")
    check(len(d.find_elements(By.CSS_SELECTOR, "#input-view g.node")) > 0, "the input graph is drawn")
    check(len(d.find_elements(By.CSS_SELECTOR, "#final-view g.node")) > 0, "the final graph is drawn")
    # walk every step with the keyboard: the rule and FILE:LINE of each trace line, and new highlights each time
    body = d.find_element(By.TAG_NAME, "body")
    seen, same_rule, changed = [], True, True
    for i in range(1, n + 1):
        st = state(d)
        want_loc, want_name = lines[i - 1].split(": ", 1)[0].split(" ", 1)
        if st[0] != f"step {i} / {n}" or st[1] != want_name or not st[2].startswith(want_loc):
            same_rule = False
            print(f"    step {i}: page {st[:3]} vs trace '{lines[i - 1][:80]}'")
        if not st[3]:
            changed = False
            print(f"    step {i}: no highlighted node")
        if seen and st[3] == seen[-1]:
            changed = False
            print(f"    step {i}: the same highlighted nodes as step {i - 1}: {st[3]}")
        seen.append(st[3])
        if i < n:
            body.send_keys(Keys.ARROW_RIGHT)
    check(same_rule, "each step shows the rule name and FILE:LINE of the matching --trace line")
    check(changed, "each step highlights nodes, and stepping changes them")
    body.send_keys(Keys.ARROW_RIGHT)
    check(state(d)[0] == f"step {n} / {n}", "the right arrow stops at the last step")
    body.send_keys(Keys.ARROW_LEFT)
    check(n < 2 or state(d)[0] == f"step {n - 1} / {n}", "the left arrow steps back")
    d.find_element(By.ID, "first").click()
    d.find_element(By.ID, "next").click()
    check(n < 2 or (state(d)[0] == f"step 2 / {n}" and state(d)[3] == seen[1]), "the next button goes to step 2")
    d.execute_script("const s = document.getElementById('slider'); s.value = s.max; s.dispatchEvent(new Event('input'));")
    check(state(d)[0] == f"step {n} / {n}" and state(d)[3] == seen[-1], "the slider goes to the last step")
    # search: a rule, then a node
    box = d.find_element(By.ID, "search")
    box.clear()
    box.send_keys(rule_to_find)
    WebDriverWait(d, 5).until(lambda d: d.find_element(By.ID, "results").is_displayed())
    hits = [e for e in d.find_elements(By.CSS_SELECTOR, "#results div") if e.text.startswith("rule " + rule_to_find)]
    if check(bool(hits), f"search '{rule_to_find}' finds the rule"):
        hits[0].click()
        want = next(i for i, l in enumerate(lines) if l.split(" ", 2)[1] == rule_to_find + ":") + 1
        check(state(d)[0] == f"step {want} / {n}", f"clicking it shows its first step ({want})")
    box.clear()
    box.send_keys(node_to_find)
    WebDriverWait(d, 5).until(lambda d: d.find_element(By.ID, "results").is_displayed())
    hits = [e for e in d.find_elements(By.CSS_SELECTOR, "#results div") if node_to_find in e.text]
    if check(bool(hits), f"search '{node_to_find}' finds the node"):
        hits[0].click()
        check(len(d.find_elements(By.CSS_SELECTOR, "g.node.found")) >= 1, "clicking it marks the node in a graph")
    box.send_keys(Keys.ESCAPE)
    if verb == "compile":
        check("llvm" in d.find_element(By.ID, "kernel-section").get_attribute("innerHTML").lower(), "the kernel section has the LLVM IR pane")
        d.find_element(By.CSS_SELECTOR, "#llvm-pane summary").click()
        check("define" in d.find_element(By.ID, "llvm").text, "the LLVM IR pane opens and shows the function")
        check("for r0 in range(" in d.find_element(By.ID, "nest").text, "the loop nest is shown")
        sched = subprocess.run([uopc, "compile", path], capture_output=True, text=True,
                               env=dict(os.environ, UOPC_DEBUG="schedule")).stderr
        m = re.search(r"uopc schedule: (\d+) kernels?$", sched, re.M)
        want = int(m.group(1)) if m else 1  # a kernel file: one kernel, no schedule
        got = len(d.find_elements(By.CSS_SELECTOR, "#kernels .kernel"))
        check(got == want, f"one pane per kernel of the plan ({got} panes, UOPC_DEBUG=schedule: {want})")
        if m:
            plan = d.find_element(By.ID, "plan").text
            check(f"{want} kernel" in plan and "buffer 0:" in plan, "the plan section lists the buffers and kernels")
            check(len(d.find_elements(By.CSS_SELECTOR, "#kernels .kernel svg")) == want, "every kernel's graph is drawn")
    res = d.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    check(res == [], f"the page loaded nothing else (resources: {res})")
    errs = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    check(not errs, f"no errors in the browser console {errs}")
    d.execute_script("window.scrollTo(0, 0)")
    d.find_element(By.ID, "first").click()
    shot = os.path.join(out, f"{name}.png")
    d.save_screenshot(shot)
    print(f"  screenshot: {shot}")


def large(d, uopc, out):
    """A 10,000-node graph and a 5,000-step trace: time to write, to open."""
    random.seed(7)
    lines = [f"%p{i} = param : slot={i} dtype=i32" for i in range(16)]
    names = [f"%p{i}" for i in range(16)]
    n = 16
    while n < 12475:  # hash consing merges a few: about 10,100 distinct nodes
        op = random.choice(["add", "mul", "max", "add", "cmplt"])
        a = names[-1] if random.random() < 0.5 else random.choice(names[-40:])
        b = random.choice(names[-300:])
        if op == "cmplt":
            lines.append(f"%v{n} = cmplt {a}, {b}")
            lines.append(f"%w{n + 1} = where %v{n}, {a}, {b}")
            names.append(f"%w{n + 1}")
            n += 2
        else:
            lines.append(f"%v{n} = {op} {a}, {b}")
            names.append(f"%v{n}")
            n += 1
    cases = [("graph10k", "\n".join(lines) + "\n", "simplify"),
             ("steps5k", "%a = stack " + ", ".join(str(i) for i in range(2500)) + "\n%b = mul %a, %a\n%c = add %b, %a\n", "run")]
    for name, text, verb in cases:
        src = os.path.join(out, name + ".uir")
        with open(src, "w") as f:
            f.write(text)
        nodes = subprocess.run([uopc, "print", "--emit=dot", src], capture_output=True, text=True).stdout.count("label=")
        steps = len(trace_lines(uopc, verb, src))
        page = os.path.join(out, name + ".html")
        t0 = time.monotonic()
        r = subprocess.run([uopc, "viz", src, "--verb", verb, "-o", page], capture_output=True, text=True)
        gen = time.monotonic() - t0
        if not check(r.returncode == 0, f"{name}: uopc viz exits 0 ({r.stderr.strip()})"):
            continue
        wall, ready = load(d, page)
        size = os.path.getsize(page)
        print(f"  {name}: {nodes} nodes, {steps} steps: written in {gen:.2f} s, {size / 1e6:.1f} MB, "
              f"opened in {wall:.2f} s (drawn {ready} ms after navigation start)")
        check(gen < 10, f"{name}: written in under 10 s")
        check(wall < 5, f"{name}: opened in under 5 s")
        body = d.find_element(By.TAG_NAME, "body")
        t0 = time.monotonic()
        for _ in range(20):
            body.send_keys(Keys.ARROW_RIGHT)
        per = (time.monotonic() - t0) / 20
        check(state(d)[0] == f"step 21 / {steps}", f"{name}: 20 steps with the arrow key, {per * 1000:.0f} ms each")
        d.save_screenshot(os.path.join(out, name + ".png"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uopc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--large", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="uopc-viz-chromium-")
    d = browser(profile)
    try:
        # seed chapter 2: a*b+a run by rewriting; chapter 3.1: the copy kernel's index simplified
        page_case(d, a.uopc, a.source, a.out, "viz_mul_add", "examples/mul_add.uir", "run", "push_stack", "%m")
        page_case(d, a.uopc, a.source, a.out, "viz_copy_kernel", "examples/copy_kernel.uir", "simplify", "div_sum", "%flat")
        page_case(d, a.uopc, a.source, a.out, "viz_ravel_unravel", "test/golden/ravel_unravel.uir", "simplify", "mod_small", "%d")
        page_case(d, a.uopc, a.source, a.out, "viz_copy_compile", "examples/copy_kernel.uir", "compile", "simplify_index", "%idx")
        # a tensor program compiled: the plan (softmax over rows: several kernels and temporaries)
        page_case(d, a.uopc, a.source, a.out, "viz_softmax_plan", "test/golden/softmax_rows.uir", "compile", "fold", "%e")
        if a.large:
            large(d, a.uopc, a.out)
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)
    if FAILS:
        print(f"viz browser test: {len(FAILS)} checks FAILED")
        return 1
    print("viz browser test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

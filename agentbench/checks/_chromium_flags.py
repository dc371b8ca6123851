"""Chromium's command line for the browser checks, in one place for both ways it starts.

On the host (tests, ``--host-browser``) Playwright launches Chromium and adds its own defaults;
in the checker container the host starts Chromium itself under its own uid (so a compromised
renderer cannot reach the worker that judges it) and the worker connects over CDP, so the same
defaults are given here. No playwright import: the host's checker code reads this module.
"""

from __future__ import annotations

__all__ = ["CHROMIUM_ARGS", "IGNORED_DEFAULT_ARGS", "PLAYWRIGHT_DEFAULTS"]

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic", "--mute-audio",
    "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    # A scroll (Space on a page that does not prevent it) jumps at once: smooth scrolling animates
    # on the compositor in wall-clock time, outside the virtual clock, so two runs of one script
    # would show the page at different offsets.
    "--disable-smooth-scrolling",
    # Nothing leaves the machine even where routing cannot see it (WebSockets, WebRTC).
    "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    # A runaway allocation crashes the tab at 512 MB instead of eating the machine.
    "--js-flags=--max-old-space-size=512",
    # A pooled page must never go "back" into a previous session's document.
    "--disable-back-forward-cache",
    # A person's browser: sound may start without a gesture (a rejected play() is no page error a
    # person sees), and nothing tells the page it is automated (navigator.webdriver is false).
    "--autoplay-policy=no-user-gesture-required", "--disable-blink-features=AutomationControlled",
]
IGNORED_DEFAULT_ARGS = ["--enable-automation"]

# What Playwright adds when it launches headless Chromium itself (read off its command line),
# less --enable-automation, the pipe and extension flags: pages must render and answer alike
# however the browser was started (scrollbars, colour profile, hover and pointer types).
PLAYWRIGHT_DEFAULTS = [
    "--disable-field-trial-config", "--disable-background-networking", "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows", "--disable-back-forward-cache", "--disable-breakpad",
    "--disable-component-extensions-with-background-pages", "--disable-component-update",
    "--no-default-browser-check", "--disable-default-apps", "--disable-dev-shm-usage", "--disable-extensions",
    "--disable-features=AvoidUnnecessaryBeforeUnloadCheckSync,DestroyProfileOnBrowserClose,HttpsUpgrades,"
    "HttpsFirstBalancedModeAutoEnable,LensOverlay,MediaRouter,PaintHolding,ThirdPartyStoragePartitioning,"
    "AvoidCorsURLLoaderRestartOnRedirect,OptimizationHints,NetworkTimeServiceQuerying",
    "--enable-features=CDPScreenshotNewSurface", "--allow-pre-commit-input", "--disable-hang-monitor",
    "--disable-ipc-flooding-protection", "--disable-popup-blocking", "--disable-prompt-on-repost",
    "--disable-renderer-backgrounding", "--force-color-profile=srgb", "--metrics-recording-only",
    "--no-first-run", "--password-store=basic", "--use-mock-keychain", "--no-service-autorun",
    "--disable-search-engine-choice-screen", "--enable-unsafe-swiftshader", "--disable-infobars",
    "--disable-sync", "--headless", "--hide-scrollbars", "--mute-audio",
    "--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4",
]

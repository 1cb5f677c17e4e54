// The login page's script: it keeps the token the page carries for this
// tab, as the web view keeps one, and replaces the login page with the
// web view. The navigation starts on this server's own page, so the
// browser sends the SameSite=Strict cookie with it even when the login
// link was clicked on another site; and no URL ever holds the token.
"use strict";
const meta = document.querySelector('meta[name="cairn-token"]');
if (meta && meta.content) sessionStorage.setItem("cairn-token", meta.content);
location.replace("/");

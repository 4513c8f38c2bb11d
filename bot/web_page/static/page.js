// mnemo's web page: the little that needs a script. Everything works without it.
// A form or button with data-confirm asks before it is sent (forgetting, deleting everything).
document.addEventListener("submit", function (event) {
  var form = event.target;
  var button = event.submitter;
  var question = (button && button.dataset.confirm) || form.dataset.confirm;
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});

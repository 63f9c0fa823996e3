# nbgrader settings baked into the single-user image (deploy/z2jh/Dockerfile): one course, its
# exchange on the shared volume that values.yaml mounts at /srv/nbgrader/exchange.
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "gpu-ml-course"
c.Exchange.root = "/srv/nbgrader/exchange"
c.ExchangeFactory.submit = "course_hub_exchange.PrivateSubmit"
